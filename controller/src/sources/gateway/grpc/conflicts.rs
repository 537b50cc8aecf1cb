//! An HTTPRoute and a GRPCRoute on one listener whose hostnames meet: the spec accepts exactly
//! one, the oldest (then the first by `namespace/name`), and the other's parent says
//! `Accepted=False`. Routes are judged in that order, so the first to claim a host keeps it.

use std::collections::BTreeMap;

use shunt_spec::HostMatch;

use super::super::{
    attachment::{Gateways, Listener, Parent},
    hostnames,
};

/// The parent's `Accepted` reason when a route of the other kind holds a host it would serve.
pub const REASON: &str = "HostnameConflict";

/// The hosts each listener serves, by the kind of route that claimed them.
#[derive(Default)]
pub struct Claims {
    by_listener: BTreeMap<Listener, Vec<(&'static str, HostMatch)>>,
}

impl Claims {
    /// Judges one accepted route's parents, routes taken in precedence order: a parent whose
    /// hosts on some listener meet those a route of another kind claimed there is refused (its
    /// attachments no longer counted); the others' hosts are claimed.
    pub fn judge(&mut self, kind: &'static str, parents: &mut [Parent], gateways: &mut Gateways<'_>) {
        for parent in parents.iter_mut().filter(|parent| parent.refused.is_none()) {
            let conflicts = parent.attached.iter().any(|(listener, hosts)| {
                let claimed = self.by_listener.get(listener).map_or(&[][..], Vec::as_slice);
                claimed
                    .iter()
                    .any(|(other, host)| *other != kind && hosts.iter().any(|mine| meet(host, mine)))
            });
            if !conflicts {
                for (listener, hosts) in &parent.attached {
                    let claimed = self.by_listener.entry(listener.clone()).or_default();
                    claimed.extend(hosts.iter().map(|host| (kind, host.clone())));
                }
                continue;
            }
            for ((gateway, at), _) in parent.attached.drain(..) {
                if let Some(listener) = gateways.get_mut(&gateway).and_then(|listeners| listeners.get_mut(at)) {
                    listener.attached = listener.attached.saturating_sub(1);
                }
            }
            parent.refused = Some(REASON);
        }
    }
}

/// Whether some host matches both patterns.
fn meet(a: &HostMatch, b: &HostMatch) -> bool {
    matches!((a, b), (HostMatch::Any, _) | (_, HostMatch::Any))
        || !hostnames::intersect(Some(a), std::slice::from_ref(b)).is_empty()
}
