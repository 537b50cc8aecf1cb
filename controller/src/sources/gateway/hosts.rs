//! Every route's entries placed on the hosts it serves, then each host's paths in the spec's
//! precedence order: the match's own (Exact, longest prefix, method, headers, query), then the
//! oldest route, then `namespace/name`, then rule and match order. That order is each path's
//! `rank`; a host with conditions is matched by it (see `spec/src/matching.rs`), and on a host
//! without any it agrees with the proxy's own order (Exact, then the longest prefix).
//!
//! ```text
//! (host, listeners, route precedence, Entry) ─ by host ─ sort ─ drop repeats ─▶ VirtualHostSpec
//! ```

use std::{collections::BTreeMap, sync::Arc};

use shunt_spec::{HostMatch, Listeners, PathKind, PathSpec, RequestConditions, VirtualHostSpec};

use super::rules::Entry;

/// Most paths on one host from all routes: past it, the newest routes' paths are dropped.
pub const MAX_HOST_PATHS: usize = 4096;

/// A route's precedence among routes: created first, (missing timestamps last), then
/// `namespace/name`.
pub type RouteOrder = (bool, Option<k8s_openapi::jiff::Timestamp>, String);

/// One entry on one host.
pub struct Placed<'r> {
    pub listeners: Listeners,
    pub route: &'r RouteOrder,
    pub entry: &'r Entry,
}

/// Places entries by host and builds each host; `None`-free, sorted by host.
#[derive(Default)]
pub struct HostsBuilder<'r> {
    hosts: BTreeMap<HostMatch, Vec<Placed<'r>>>,
}

// === impl HostsBuilder ===

impl<'r> HostsBuilder<'r> {
    pub fn place(&mut self, host: HostMatch, placed: Placed<'r>) {
        self.hosts.entry(host).or_default().push(placed);
    }

    pub fn finish(self) -> Vec<VirtualHostSpec> {
        self.hosts
            .into_iter()
            .filter_map(|(host, placed)| build(host, placed))
            .collect()
    }
}

/// The hosts being built: the HTTP and HTTPS listeners', and each extra port's.
#[derive(Default)]
pub struct Builders<'k> {
    pub main: HostsBuilder<'k>,
    pub ports: BTreeMap<u16, HostsBuilder<'k>>,
}

impl Builders<'_> {
    #[allow(clippy::type_complexity, reason = "the main hosts and each port's")]
    pub fn finish(self) -> (Vec<Arc<VirtualHostSpec>>, BTreeMap<u16, Vec<Arc<VirtualHostSpec>>>) {
        let shared = |built: Vec<VirtualHostSpec>| built.into_iter().map(Arc::new).collect::<Vec<_>>();
        let ports = self
            .ports
            .into_iter()
            .map(|(port, builder)| (port, shared(builder.finish())));
        (
            shared(self.main.finish()),
            ports.filter(|(_, hosts)| !hosts.is_empty()).collect(),
        )
    }
}

/// One host's paths, ranked; `None` when nothing is left.
fn build(host: HostMatch, mut placed: Vec<Placed<'_>>) -> Option<VirtualHostSpec> {
    // Past the bound, the newest routes lose their paths: a route can never push an older
    // route's paths (say its catch-all `/`) off the host.
    if placed.len() > MAX_HOST_PATHS {
        placed.sort_by(|a, b| (a.route, a.entry.order).cmp(&(b.route, b.entry.order)));
        placed.truncate(MAX_HOST_PATHS);
    }
    placed.sort_by(|a, b| {
        (&a.entry.specificity, a.route, a.entry.order).cmp(&(&b.entry.specificity, b.route, b.entry.order))
    });
    // The first of equal (path, kind, conditions) takes each listener; a later one only what is left.
    let mut taken: BTreeMap<(&str, PathKind), Vec<Held<'_>>> = BTreeMap::new();
    let mut paths = Vec::new();
    for one in &placed {
        let matched = &one.entry.matched;
        let conditions = one.entry.options.conditions.as_ref();
        let same = taken.entry((matched.path.as_str(), matched.kind)).or_default();
        let listeners = match same.iter_mut().find(|(held, _)| *held == conditions) {
            None => {
                same.push((conditions, one.listeners));
                one.listeners
            }
            Some((_, held)) => {
                let Some(left) = remaining(*held, one.listeners) else {
                    continue;
                };
                *held = Listeners::Both;
                left
            }
        };
        let mut options = one.entry.options.clone();
        options.listeners = listeners;
        options.rank = u32::try_from(paths.len() + 1).unwrap_or(u32::MAX);
        paths.push(PathSpec {
            path: matched.path.clone(),
            kind: matched.kind,
            backend: one
                .entry
                .backend
                .as_ref()
                .map(|backend| backend.id.clone())
                .unwrap_or_default(),
            source: one.route.2.clone(),
            ssl_redirect: false,
            options: Arc::new(options),
        });
    }
    (!paths.is_empty()).then_some(VirtualHostSpec {
        host,
        paths,
        exclusive: false,
    })
}

/// The conditions of a (path, kind) already placed, and the listeners it holds.
type Held<'e> = (Option<&'e RequestConditions>, Listeners);

/// What of `wanted` is not `held`.
fn remaining(held: Listeners, wanted: Listeners) -> Option<Listeners> {
    match (held, wanted) {
        (Listeners::Both, _) => None,
        (held, wanted) if held == wanted => None,
        (Listeners::Plain, _) => Some(Listeners::Tls),
        (Listeners::Tls, _) => Some(Listeners::Plain),
    }
}
