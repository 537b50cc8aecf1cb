//! The immutable route table: built once per configuration, shared by every request.

use std::{
    collections::{HashMap, HashSet},
    fmt,
    sync::Arc,
};

use http::HeaderName;

use super::{
    conditions::{Facts, NoFacts},
    rules::RouteRules,
};
use crate::{
    metrics::RouteStats,
    spec::{BackendId, HostMatch, RedirectSpec, TableSpec, VirtualHostSpec},
    tls::CertificateIndex,
    upstream::Upstream,
};

#[cfg(test)]
use build::route_name;
use build::{Parts, build_routes, default_route};
use hosts::{Found, Hosts, VirtualHost, is_ranked};

/// What a request that matched needs: where to go and what to count.
pub struct Route {
    /// `host` + `path` as configured, for logs and metrics.
    pub name: Arc<str>,
    /// The object that asked for this route, `namespace/name`.
    pub source: Arc<str>,
    /// For a redirect route, an upstream without endpoints that is never used.
    pub upstream: Arc<Upstream>,
    pub stats: RouteStats,
    /// Answer plain-HTTP requests with a 308 to HTTPS.
    pub ssl_redirect: bool,
    /// Answer with this redirect instead of forwarding. Boxed: a route without one (nearly
    /// all) holds 8 bytes instead of ~136, and checking for `None` costs the same.
    pub redirect: Option<Box<RedirectSpec>>,
    /// Set to `http` or `https` on forwarded requests, by listener.
    pub client_protocol_header: Option<HeaderName>,
    /// A profile's request and answer shaping (ingress-nginx's fields, HSTS, body limit).
    /// Shared: every route without options holds [`RouteRules::unchanged`].
    pub rules: Arc<RouteRules>,
}

pub struct RouteTable {
    spec: Arc<TableSpec>,
    /// Every route when all are served on both listeners; else the plain listener's.
    plain: Hosts,
    /// The TLS listener's routes, when some route is limited to one listener.
    tls: Option<Hosts>,
    /// The extra ports' listeners' routes (`ports.rs`); empty for nearly every table.
    ports: ports::PortTables,
    default_route: Option<Arc<Route>>,
    /// How many of the spec's hosts are ranked (see `ranked.rs`): while any is, lookups are
    /// given the request's facts. A count, so a rebuild of some hosts updates it by theirs.
    ranked: usize,
    certificates: CertificateIndex,
    /// What redirect routes hold as upstream; carried to the next table, so a reused redirect
    /// route is recognisably current.
    nowhere: Arc<Upstream>,
}

/// foldhash, not SipHash: keys come from our own configuration, so no client can choose them to
/// collide (requests only look up), and a build hashes every host and backend once or twice.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A path the table could not take; the rest of the table is unaffected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildWarning {
    pub host: HostMatch,
    pub pattern: String,
    pub reason: String,
}

/// A table built next to the live one: what it reused and which routes left.
pub struct Rebuilt {
    pub table: RouteTable,
    pub warnings: Vec<BuildWarning>,
    /// The counters of the previous table's routes that the new one did not take over. Their
    /// key may also belong to a route built anew (the `stats` callback handed it out again); the
    /// caller retires the others.
    pub dropped: Vec<RouteStats>,
    /// Hosts (per listener view) taken over from the previous table unchanged.
    pub reused_hosts: usize,
}

/// What a build asks of its caller (the publisher), which owns upstreams and metrics: the
/// shared `Upstream` for a backend id (the previous table's, so pools and counters carry over),
/// and the counters of a route, given its name and the backend it forwards to (`None` for
/// redirects). A pair of closures is one.
pub trait BuildParts {
    fn upstream(&mut self, id: &BackendId) -> Arc<Upstream>;
    fn stats(&mut self, route: &Arc<str>, backend: Option<&Arc<str>>) -> RouteStats;
}

impl<U, S> BuildParts for (U, S)
where
    U: FnMut(&BackendId) -> Arc<Upstream>,
    S: FnMut(&Arc<str>, Option<&Arc<str>>) -> RouteStats,
{
    fn upstream(&mut self, id: &BackendId) -> Arc<Upstream> {
        (self.0)(id)
    }

    fn stats(&mut self, route: &Arc<str>, backend: Option<&Arc<str>>) -> RouteStats {
        (self.1)(route, backend)
    }
}

// === impl Route ===

impl Route {
    /// The route's upstream, then its canary's if it has one, then its split's, its error
    /// backend's and its mirrors'.
    pub fn upstreams(&self) -> impl Iterator<Item = &Arc<Upstream>> {
        let canary = self.rules.balance.as_ref().and_then(|balance| balance.canary.as_ref());
        let split = self.rules.split.iter().flat_map(|split| split.upstreams());
        let errors = self
            .rules
            .error_pages
            .as_ref()
            .and_then(|pages| pages.upstream.as_ref());
        std::iter::once(&self.upstream)
            .chain(canary.map(|canary| &canary.upstream))
            .chain(split)
            .chain(errors)
            .chain(self.rules.mirror.iter().flat_map(|mirror| mirror.upstreams()))
    }
}

fn stats_of(route: &Arc<Route>) -> RouteStats {
    route.stats.clone()
}

// === impl RouteTable ===

impl RouteTable {
    /// An empty table: every request gets 404.
    pub fn empty() -> Self {
        Self::build(
            Arc::new(TableSpec::default()),
            |_| unreachable!("no backends"),
            |_, _| RouteStats::detached(),
        )
        .0
    }

    /// Builds the indexes. `upstream` turns a backend id into its shared `Upstream` (so the
    /// caller can reuse the previous table's); `stats` hands out per-route counters, given the
    /// route's name and the backend it forwards to (empty for redirects).
    pub fn build(
        spec: Arc<TableSpec>,
        upstream: impl FnMut(&BackendId) -> Arc<Upstream>,
        stats: impl FnMut(&Arc<str>, Option<&Arc<str>>) -> RouteStats,
    ) -> (Self, Vec<BuildWarning>) {
        let rebuilt = Self::rebuild(spec, None, (upstream, stats));
        (rebuilt.table, rebuilt.warnings)
    }

    /// [`RouteTable::build`] next to `previous`: a host whose spec is equal and whose routes'
    /// upstreams are the ones `upstream` gives now is taken over as it is (same `Arc`s, same
    /// counters, no matchit tree built); only the others are built. The result equals a build
    /// from scratch with the same callbacks.
    pub fn rebuild(spec: Arc<TableSpec>, previous: Option<&RouteTable>, callbacks: impl BuildParts) -> Rebuilt {
        let mut parts = Parts::new(&spec, callbacks, spec.backends.len());
        let scoped = changed::splits_listeners(&spec);
        let ranked = spec.hosts.iter().filter(|vhost| is_ranked(vhost)).count();
        // A table split by listener and one that is not keep their hosts in different places.
        let previous = previous.filter(|previous| previous.tls.is_some() == scoped);
        // Redirect routes forward nowhere; they share one upstream without endpoints.
        let nowhere = match previous {
            Some(previous) => previous.nowhere.clone(),
            None => Arc::new(Upstream::new(
                "redirect",
                Default::default(),
                Vec::new(),
                Default::default(),
            )),
        };
        let mut warnings = Vec::new();
        let mut plain = Hosts::default();
        // Sized once, so a large build does not grow the map by rehashing.
        plain.exact.reserve(spec.hosts.len());
        let mut tls = scoped.then(Hosts::default);
        let mut reused: HashSet<*const VirtualHost> = HashSet::new();
        for vhost in &spec.hosts {
            let kept = previous.and_then(|previous| previous.reusable(vhost, &nowhere, &mut parts));
            if let Some((kept_plain, kept_tls)) = kept {
                for (hosts, kept) in [(Some(&mut plain), kept_plain), (tls.as_mut(), kept_tls)] {
                    if let (Some(hosts), Some(kept)) = (hosts, kept) {
                        reused.insert(Arc::as_ptr(&kept));
                        hosts.insert(&vhost.host, kept);
                    }
                }
                continue;
            }
            let before = warnings.len();
            let routes = build_routes(vhost, &nowhere, &mut parts, &mut warnings);
            let clean = warnings.len() == before;
            let views = [(&mut plain, scoped.then_some(false))]
                .into_iter()
                .chain(tls.as_mut().map(|tls| (tls, Some(true))));
            for (hosts, view) in views {
                if let Some(built) = VirtualHost::build(vhost, &routes, view, clean, &mut parts, &mut warnings) {
                    hosts.insert(&vhost.host, Arc::new(built));
                }
            }
        }
        let previous_default = previous.and_then(|previous| previous.default_route.as_ref());
        let default_route = default_route(&spec, previous_default, &mut parts);
        let (dropped, reused_hosts) = match previous {
            Some(previous) => previous.left_behind(default_route.as_ref(), &reused),
            None => (Vec::new(), 0),
        };
        let ports = ports::build(&spec, &nowhere, &mut parts, &mut warnings);
        // It borrows `spec`, which the table takes.
        drop(parts);
        let table = RouteTable {
            spec,
            plain,
            tls,
            ports,
            default_route,
            ranked,
            certificates: CertificateIndex::default(),
            nowhere,
        };
        Rebuilt {
            table,
            warnings,
            dropped,
            reused_hosts,
        }
    }

    /// The counters of this (previous) table's routes the next one did not take over, and how
    /// many of its hosts it did take over (`reused`), given the next table's default route.
    fn left_behind(
        &self,
        default_route: Option<&Arc<Route>>,
        reused: &HashSet<*const VirtualHost>,
    ) -> (Vec<RouteStats>, usize) {
        let mut dropped = Vec::new();
        if let Some(previous) = &self.default_route
            && !default_route.is_some_and(|route| Arc::ptr_eq(route, previous))
        {
            dropped.push(stats_of(previous));
        }
        let mut reused_hosts = 0;
        for vhost in self.plain.iter().chain(self.tls.iter().flat_map(Hosts::iter)) {
            if reused.contains(&Arc::as_ptr(vhost)) {
                reused_hosts += 1;
                continue;
            }
            dropped.extend(vhost.routes.iter().map(stats_of));
        }
        dropped.extend(ports::stats(&self.ports));
        (dropped, reused_hosts)
    }

    /// The previous views (plain, TLS) of `vhost` if they can serve in the next table: same spec,
    /// built cleanly, and every route's upstream is the current one for its backend.
    #[allow(clippy::type_complexity, reason = "one host's two listener views")]
    fn reusable(
        &self,
        vhost: &Arc<VirtualHostSpec>,
        nowhere: &Arc<Upstream>,
        parts: &mut Parts<'_, impl BuildParts>,
    ) -> Option<(Option<Arc<VirtualHost>>, Option<Arc<VirtualHost>>)> {
        // `hosts` is sorted by host (compile's order); an unsorted hand-built spec only loses reuse.
        // `Arc`s compare by address first: a host the compile kept costs no deep comparison.
        let index = self.spec.hosts.binary_search_by(|old| old.host.cmp(&vhost.host)).ok()?;
        if self.spec.hosts[index] != *vhost {
            return None;
        }
        let plain = self.plain.get(&vhost.host).cloned();
        let tls = self.tls.as_ref().and_then(|tls| tls.get(&vhost.host)).cloned();
        if plain.is_none() && tls.is_none() {
            // Nothing was built for it (every path warned): build again, warnings included.
            return None;
        }
        for built in plain.iter().chain(tls.iter()) {
            if !built.clean {
                return None;
            }
            for upstream in built.routes.iter().flat_map(|route| route.upstreams()) {
                if !Arc::ptr_eq(upstream, nowhere) && !Arc::ptr_eq(upstream, &parts.get(&upstream.id)?) {
                    return None;
                }
            }
        }
        Some((plain, tls))
    }

    /// Finds the route for a normalised host (see [`super::normalize_host`]) and a path
    /// without its query, as the plain listener sees it. Exact host, then one-label wildcard,
    /// then deeper wildcards, then host-less rules, then the default.
    pub fn lookup(&self, host: &str, path: &str) -> Option<&Arc<Route>> {
        self.lookup_on(host, path, false)
    }

    /// [`RouteTable::lookup`] for a request that arrived on the TLS listener (`tls`) or the
    /// plain one: routes limited to the other listener do not exist for it. An exclusive host
    /// that matches no path gives `None` without trying the rest.
    pub fn lookup_on(&self, host: &str, path: &str, tls: bool) -> Option<&Arc<Route>> {
        self.lookup_with(host, path, tls, &NoFacts)
    }

    /// [`RouteTable::lookup_on`] where a ranked host's conditions read `facts` (with
    /// [`NoFacts`], only paths without conditions match there).
    #[inline]
    pub fn lookup_with(&self, host: &str, path: &str, tls: bool, facts: &impl Facts) -> Option<&Arc<Route>> {
        let hosts = match (&self.tls, tls) {
            (Some(hosts), true) => hosts,
            _ => &self.plain,
        };
        match hosts.find(host, path, facts) {
            Found::Route(route) => Some(route),
            Found::Stop => None,
            Found::Next => self.default_route.as_ref(),
        }
    }

    /// Whether some host is ranked: its lookups need the request's facts.
    #[inline]
    pub fn has_ranked(&self) -> bool {
        self.ranked > 0
    }

    /// Server certificates by SNI name; the publisher loads them (see `spec.tls`).
    pub fn certificates(&self) -> &CertificateIndex {
        &self.certificates
    }

    pub fn set_certificates(&mut self, certificates: CertificateIndex) {
        self.certificates = certificates;
    }

    /// The configuration this table was built from.
    pub fn spec(&self) -> &Arc<TableSpec> {
        &self.spec
    }
}

impl fmt::Debug for RouteTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteTable").field("spec", &self.spec).finish()
    }
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("name", &self.name)
            .field("upstream", &self.upstream.id)
            .finish()
    }
}

mod build;
mod changed;
mod hosts;
mod ports;
#[cfg(test)]
mod tests;
