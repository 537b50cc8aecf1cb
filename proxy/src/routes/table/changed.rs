//! A table built from the live one when the caller knows which hosts changed: the other hosts
//! are taken over without looking at them, so a one-host edit costs one host, not a pass over
//! every host's spec.

use std::{
    collections::{BTreeSet, HashSet},
    sync::Arc,
};

use super::{
    BuildParts, FastMap, Hosts, Parts, Rebuilt, RouteTable, VirtualHost, build_routes, default_route, is_ranked,
    stats_of,
};
use crate::{
    spec::{BackendId, HostMatch, TableSpec, VirtualHostSpec},
    upstream::Upstream,
};

// === impl RouteTable ===

impl RouteTable {
    /// Whether [`RouteTable::rebuild_changed`] can build `spec` next to `previous`: both split
    /// their hosts by listener, or neither does (then they keep their hosts in the same places).
    pub fn rebuilds_changed(spec: &TableSpec, previous: &RouteTable) -> bool {
        // Extra ports' hosts are built whole: a table with some is always built whole.
        previous.tls.is_some() == splits_listeners(spec) && spec.ports.is_empty() && previous.ports.is_empty()
    }

    /// [`RouteTable::rebuild`] given that only `changed` hosts and `backends` differ between
    /// `previous`'s spec and `spec` (a superset is fine), and that the upstreams of `replaced` are
    /// the only ones the `upstream` callback no longer gives. Hosts routing to a replaced upstream
    /// or to a backend that appeared or left are built again too, on each listener's view when
    /// the tables split hosts by listener. `None` when one table splits them and the other does
    /// not: then only the full rebuild applies.
    pub fn rebuild_changed(
        spec: Arc<TableSpec>,
        previous: &RouteTable,
        changed: &BTreeSet<HostMatch>,
        backends: &BTreeSet<BackendId>,
        replaced: &HashSet<*const Upstream>,
        callbacks: impl BuildParts,
    ) -> Option<Rebuilt> {
        if !Self::rebuilds_changed(&spec, previous) {
            return None;
        }
        let redo = hosts_to_rebuild(&spec, previous, changed, backends, replaced);
        let mut parts = Parts::new(&spec, callbacks, 0);
        let mut plain = previous.plain.clone();
        let mut tls = previous.tls.clone();
        let split = tls.is_some();
        let mut dropped = Vec::new();
        let mut warnings = Vec::new();
        let nowhere = previous.nowhere.clone();
        let mut removed = 0;
        let ranked = ranked_after(previous, &spec, &redo);
        for host in &redo {
            for old in [plain.remove(host), tls.as_mut().and_then(|tls| tls.remove(host))]
                .into_iter()
                .flatten()
            {
                removed += 1;
                dropped.extend(old.routes.iter().map(stats_of));
            }
            let Ok(index) = spec.hosts.binary_search_by(|vhost| vhost.host.cmp(host)) else {
                continue;
            };
            let vhost = &spec.hosts[index];
            let before = warnings.len();
            let routes = build_routes(vhost, &nowhere, &mut parts, &mut warnings);
            let clean = warnings.len() == before;
            let views = [(&mut plain, split.then_some(false))]
                .into_iter()
                .chain(tls.as_mut().map(|tls| (tls, Some(true))));
            for (hosts, view) in views {
                if let Some(built) = VirtualHost::build(vhost, &routes, view, clean, &mut parts, &mut warnings) {
                    hosts.insert(&vhost.host, Arc::new(built));
                }
            }
        }
        let previous_default = previous.default_route.as_ref();
        let default_route = default_route(&spec, previous_default, &mut parts);
        if let Some(previous) = previous_default
            && !default_route.as_ref().is_some_and(|route| Arc::ptr_eq(route, previous))
        {
            dropped.push(stats_of(previous));
        }
        let before = previous.plain.len() + previous.tls.as_ref().map_or(0, Hosts::len);
        let reused_hosts = before.saturating_sub(removed);
        // It borrows `spec`, which the table takes.
        drop(parts);
        let table = RouteTable {
            ranked,
            spec,
            plain,
            tls,
            // Only tables without extra ports get here (`rebuilds_changed`).
            ports: Vec::new(),
            default_route,
            certificates: Default::default(),
            nowhere,
        };
        Some(Rebuilt {
            table,
            warnings,
            dropped,
            reused_hosts,
        })
    }
}

/// The `changed` hosts, those routing to a `replaced` upstream, and those naming a backend
/// that appeared or left (a path naming a missing backend is left out with a warning).
fn hosts_to_rebuild(
    spec: &TableSpec,
    previous: &RouteTable,
    changed: &BTreeSet<HostMatch>,
    backends: &BTreeSet<BackendId>,
    replaced: &HashSet<*const Upstream>,
) -> BTreeSet<HostMatch> {
    let mut redo: BTreeSet<HostMatch> = changed.clone();
    if !replaced.is_empty() {
        redo.extend(previous.plain.with_upstream_in(replaced));
        redo.extend(previous.tls.iter().flat_map(|tls| tls.with_upstream_in(replaced)));
    }
    let existence: BTreeSet<&BackendId> = backends
        .iter()
        .filter(|id| previous.spec.backends.contains_key(*id) != spec.backends.contains_key(*id))
        .collect();
    if !existence.is_empty() {
        let names = |vhost: &&Arc<VirtualHostSpec>| {
            (vhost.paths.iter()).any(|path| {
                let split = path.options.split.iter().flat_map(|split| split.backends());
                existence.contains(&path.backend)
                    || path.canary_backend().is_some_and(|id| existence.contains(id))
                    || path.error_backend().is_some_and(|id| existence.contains(id))
                    || split.into_iter().any(|id| existence.contains(id))
            })
        };
        redo.extend(spec.hosts.iter().filter(names).map(|vhost| vhost.host.clone()));
    }
    redo
}

/// How many of `spec`'s hosts are ranked, given `previous`'s count and that only `redo` hosts
/// may differ: theirs are counted again, the rest are not looked at.
fn ranked_after(previous: &RouteTable, spec: &TableSpec, redo: &BTreeSet<HostMatch>) -> usize {
    let ranked_in = |spec: &TableSpec, host: &HostMatch| {
        let index = spec.hosts.binary_search_by(|vhost| vhost.host.cmp(host));
        index.is_ok_and(|index| is_ranked(&spec.hosts[index]))
    };
    let (gone, came) = redo.iter().fold((0, 0), |(gone, came), host| {
        let before = usize::from(ranked_in(&previous.spec, host));
        (gone + before, came + usize::from(ranked_in(spec, host)))
    });
    // Saturating: a hand-built spec out of order may hide a host from the search.
    previous.ranked.saturating_sub(gone) + came
}

/// Whether some path of `spec` is served on one listener only: then the table keeps a view of
/// its hosts per listener.
pub(super) fn splits_listeners(spec: &TableSpec) -> bool {
    (spec.hosts.iter())
        .flat_map(|vhost| &vhost.paths)
        .any(|path| !path.options.listeners.is_both())
}

// === impl Hosts ===

impl Hosts {
    fn remove(&mut self, host: &HostMatch) -> Option<Arc<VirtualHost>> {
        match host {
            HostMatch::Exact(host) => self.exact.remove(host.as_str()),
            HostMatch::Wildcard(suffix) => self.wildcard.remove(suffix.as_str()),
            HostMatch::DeepWildcard(suffix) => self.deep_wildcard.remove(suffix.as_str()),
            HostMatch::Any => self.any.take(),
        }
    }

    fn len(&self) -> usize {
        self.exact.len() + self.wildcard.len() + self.deep_wildcard.len() + usize::from(self.any.is_some())
    }

    /// The hosts with a route to one of `upstreams`.
    fn with_upstream_in(&self, upstreams: &HashSet<*const Upstream>) -> Vec<HostMatch> {
        let uses = |vhost: &Arc<VirtualHost>| {
            vhost.routes.iter().any(|route| {
                route
                    .upstreams()
                    .any(|upstream| upstreams.contains(&Arc::as_ptr(upstream)))
            })
        };
        let named = |map: &FastMap<Box<str>, Arc<VirtualHost>>, make: fn(String) -> HostMatch| {
            map.iter()
                .filter(|(_, vhost)| uses(vhost))
                .map(move |(name, _)| make(name.to_string()))
                .collect::<Vec<_>>()
        };
        let mut hosts = named(&self.exact, HostMatch::Exact);
        hosts.extend(named(&self.wildcard, HostMatch::Wildcard));
        hosts.extend(named(&self.deep_wildcard, HostMatch::DeepWildcard));
        hosts.extend(self.any.as_ref().filter(|vhost| uses(vhost)).map(|_| HostMatch::Any));
        hosts
    }
}
