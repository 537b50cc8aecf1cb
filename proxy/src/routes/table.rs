//! The immutable route table: built once per configuration, shared by every request.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    fmt,
    sync::Arc,
};

use http::HeaderName;

use super::{
    ErrorRoute,
    conditions::{Facts, NoFacts},
    paths::{PathTable, PathTableBuilder},
    rules::RouteRules,
    split::Split,
};
use crate::{
    headers::is_connection_or_framing_field,
    metrics::RouteStats,
    mirror::Mirror,
    spec::{
        BackendId, BackendSpec, HostMatch, PathKind, PathSpec, RedirectSpec, RouteOptions, TableSpec, VirtualHostSpec,
    },
    tls::CertificateIndex,
    upstream::{Canary, RouteBalance, Upstream},
};

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

/// The virtual hosts one listener serves. Each is an `Arc` so the next table can reuse it.
#[derive(Clone, Default)]
struct Hosts {
    exact: FastMap<Box<str>, Arc<VirtualHost>>,
    /// Keyed by the suffix after `*.`.
    wildcard: FastMap<Box<str>, Arc<VirtualHost>>,
    /// Keyed by the suffix after `*.`; matched from the longest suffix down.
    deep_wildcard: FastMap<Box<str>, Arc<VirtualHost>>,
    any: Option<Arc<VirtualHost>>,
}

struct VirtualHost {
    paths: PathTable,
    /// No match here is a 404, not a fall-through (see `VirtualHostSpec::exclusive`).
    exclusive: bool,
    /// Built without a warning: only such a host may be reused, so a reused host never hides one.
    clean: bool,
    /// Every route `paths` holds, slash redirects included: the next build checks their
    /// upstreams are still current before reusing the host, and retires them when it does not.
    routes: Box<[Arc<Route>]>,
}

/// The outcome of looking up one virtual host.
enum Found<'t> {
    Route(&'t Arc<Route>),
    /// The host is known and exclusive: stop with 404.
    Stop,
    Next,
}

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

/// The caller's [`BuildParts`] during one build, with the build's upstream for each backend id
/// of the spec. The caller is asked once per backend, so every path naming one shares its `Arc`;
/// later paths find it here, keyed by the spec's own id (no copy), before the spec's B-tree is
/// searched.
struct Parts<'s, P> {
    backends: &'s BTreeMap<BackendId, BackendSpec>,
    callbacks: P,
    known: FastMap<&'s str, Arc<Upstream>>,
    /// The last path's options and the rules made of them: a host's paths, and most hosts of a
    /// class, ask for the same, so their routes share one copy.
    last_rules: Option<(Arc<RouteOptions>, Arc<RouteRules>)>,
}

impl<'s, P: BuildParts> Parts<'s, P> {
    /// `expected`: how many backends the build will ask for, so the cache does not grow by rehashing.
    fn new(spec: &'s TableSpec, callbacks: P, expected: usize) -> Self {
        Parts {
            backends: &spec.backends,
            callbacks,
            known: FastMap::with_capacity_and_hasher(expected, Default::default()),
            last_rules: None,
        }
    }

    /// `None` when the spec has no backend `id`.
    fn get(&mut self, id: &str) -> Option<Arc<Upstream>> {
        if let Some(found) = self.known.get(id) {
            return Some(found.clone());
        }
        let backends = self.backends;
        let (id, _) = backends.get_key_value(id)?;
        let made = self.callbacks.upstream(id);
        self.known.insert(id, made.clone());
        Some(made)
    }

    fn stats(&mut self, route: &Arc<str>, backend: Option<&Arc<str>>) -> RouteStats {
        self.callbacks.stats(route, backend)
    }
}

/// The default backend's route; the previous one (and its counters) while its upstream stays.
fn default_route(
    spec: &TableSpec,
    previous: Option<&Arc<Route>>,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Option<Arc<Route>> {
    let upstream = parts.get(spec.default_backend.as_ref()?)?;
    Some(match previous {
        Some(route) if Arc::ptr_eq(&route.upstream, &upstream) => route.clone(),
        _ => {
            let name: Arc<str> = "default".into();
            Arc::new(Route {
                stats: parts.stats(&name, Some(&upstream.id)),
                source: name.clone(),
                name,
                upstream,
                ssl_redirect: false,
                redirect: None,
                client_protocol_header: None,
                rules: RouteRules::unchanged(),
            })
        }
    })
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

/// The routes of one host, shared by its listener views, each with the path it serves.
/// Paths that cannot be served (unknown backend, bad header name) become warnings.
fn build_routes<'s>(
    vhost: &'s VirtualHostSpec,
    nowhere: &Arc<Upstream>,
    parts: &mut Parts<'_, impl BuildParts>,
    warnings: &mut Vec<BuildWarning>,
) -> Vec<(Arc<Route>, &'s PathSpec)> {
    let mut built: Vec<(Arc<Route>, &PathSpec)> = Vec::with_capacity(vhost.paths.len());
    let mut scratch = String::new();
    for path in &vhost.paths {
        let redirect = path.options.redirect.clone().map(Box::new);
        // A redirect forwards nowhere; a split forwards to its choices' backends, not `backend`.
        let upstream = match (&redirect, &path.options.split) {
            (Some(_), _) | (_, Some(_)) => nowhere.clone(),
            (None, None) => match parts.get(&path.backend) {
                Some(upstream) => upstream,
                None => {
                    warnings.push(BuildWarning {
                        host: vhost.host.clone(),
                        pattern: path.path.clone(),
                        reason: format!("backend {} is not in the table", path.backend),
                    });
                    continue;
                }
            },
        };
        let client_protocol_header = match path.options.client_protocol_header.as_deref().map(protocol_header) {
            None => None,
            Some(Ok(name)) => Some(name),
            Some(Err(reason)) => {
                warnings.push(BuildWarning {
                    host: vhost.host.clone(),
                    pattern: path.path.clone(),
                    reason,
                });
                continue;
            }
        };
        let rules = match route_rules(path, parts) {
            Ok(rules) => rules,
            Err(reason) => {
                warnings.push(BuildWarning {
                    host: vhost.host.clone(),
                    pattern: path.path.clone(),
                    reason,
                });
                continue;
            }
        };
        let name = route_name(&mut scratch, &vhost.host, &path.path);
        // Metrics name the backend a route forwards to (its upstream's id); a redirect forwards
        // nowhere, a split to several.
        let backend = if Arc::ptr_eq(&upstream, nowhere) {
            None
        } else {
            Some(&upstream.id)
        };
        // A host's paths mostly come from one Ingress: share its name rather than copy it per route.
        let source = match built.last() {
            Some((last, _)) if *last.source == *path.source => last.source.clone(),
            _ => path.source.as_str().into(),
        };
        let route = Route {
            stats: parts.stats(&name, backend),
            name,
            source,
            upstream,
            ssl_redirect: path.ssl_redirect,
            redirect,
            client_protocol_header,
            rules,
        };
        built.push((Arc::new(route), path));
    }
    built
}

/// The rules `path`'s options ask for, shared: every route without options holds one set, and a
/// path whose options equal the previous path's holds its rules, unless the build gave those
/// rules upstreams or a balance of their own ([`RouteRules::is_the_routes_own`]).
fn route_rules(path: &PathSpec, parts: &mut Parts<'_, impl BuildParts>) -> Result<Arc<RouteRules>, String> {
    let options = &path.options;
    if let Some((last, rules)) = &parts.last_rules
        && (Arc::ptr_eq(last, options) || last == options)
    {
        return Ok(rules.clone());
    }
    if **options == RouteOptions::default() {
        return Ok(RouteRules::unchanged());
    }
    let rules = RouteRules::from_options(options)
        .and_then(|rules| balanced(rules, path, parts))
        .and_then(|rules| with_error_pages(rules, path, parts))?;
    let rules = Arc::new(rules);
    if !rules.is_the_routes_own() {
        parts.last_rules = Some((options.clone(), rules.clone()));
    }
    Ok(rules)
}

/// `rules` with the path's canary (its upstream from `parts`), hash key and cookie affinity,
/// when it has any, and its split with each choice's upstream.
fn balanced(
    mut rules: RouteRules,
    path: &PathSpec,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Result<RouteRules, String> {
    let options = &path.options;
    if let Some(split) = &options.split {
        rules.split = Some(Arc::new(Split::new(split, |id| parts.get(id))?));
    }
    if let Some(mirror) = &options.mirror {
        rules.mirror = Some(Arc::new(Mirror::new(mirror, |id| parts.get(id))?));
    }
    if options.canary.is_none() && options.hash.is_none() && options.affinity.is_none() {
        return Ok(rules);
    }
    let canary = match &options.canary {
        None => None,
        Some(spec) => Some(Canary {
            upstream: parts
                .get(&spec.backend)
                .ok_or_else(|| format!("canary backend {} is not in the table", spec.backend))?,
            rule: spec.rule.clone(),
            hash: spec.hash.clone(),
        }),
    };
    rules.balance = Some(Arc::new(RouteBalance {
        canary,
        hash: options.hash.clone(),
        affinity: options.affinity.clone(),
    }));
    Ok(rules)
}

/// `rules` with the path's error pages and their backend's upstream from `parts`.
fn with_error_pages(
    mut rules: RouteRules,
    path: &PathSpec,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Result<RouteRules, String> {
    let Some(pages) = &path.options.error_pages else {
        return Ok(rules);
    };
    let upstream = match &pages.backend {
        None => None,
        Some(id) => Some(
            parts
                .get(id)
                .ok_or_else(|| format!("error backend {id} is not in the table"))?,
        ),
    };
    rules.error_pages = Some(Arc::new(ErrorRoute::new(pages, upstream)?));
    Ok(rules)
}

/// A route's client protocol header: a valid name, and none of the fields that frame or route the
/// message (set by a route, they would go out beside the proxy's own).
fn protocol_header(name: &str) -> Result<HeaderName, String> {
    match HeaderName::from_bytes(name.as_bytes()) {
        Ok(name) if is_connection_or_framing_field(&name) => {
            Err(format!("client protocol header {name}: a connection or framing field"))
        }
        Ok(name) => Ok(name),
        Err(error) => Err(format!("client protocol header {name:?}: {error}")),
    }
}

/// A route's name, `host` + `path` as configured, written in `scratch` (one buffer for a host's
/// routes) and then copied once into the `Arc` that the route and its counters share.
fn route_name(scratch: &mut String, host: &HostMatch, path: &str) -> Arc<str> {
    scratch.clear();
    match host {
        HostMatch::Exact(host) => scratch.push_str(host),
        HostMatch::Wildcard(suffix) => {
            scratch.push_str("*.");
            scratch.push_str(suffix);
        }
        HostMatch::DeepWildcard(suffix) => {
            scratch.push_str("**.");
            scratch.push_str(suffix);
        }
        HostMatch::Any => scratch.push('*'),
    }
    scratch.push_str(path);
    Arc::from(scratch.as_str())
}

// === impl Hosts ===

impl Hosts {
    fn insert(&mut self, host: &HostMatch, vhost: Arc<VirtualHost>) {
        match host {
            HostMatch::Exact(host) => {
                self.exact.insert(host.as_str().into(), vhost);
            }
            HostMatch::Wildcard(suffix) => {
                self.wildcard.insert(suffix.as_str().into(), vhost);
            }
            HostMatch::DeepWildcard(suffix) => {
                self.deep_wildcard.insert(suffix.as_str().into(), vhost);
            }
            HostMatch::Any => self.any = Some(vhost),
        }
    }

    fn get(&self, host: &HostMatch) -> Option<&Arc<VirtualHost>> {
        match host {
            HostMatch::Exact(host) => self.exact.get(host.as_str()),
            HostMatch::Wildcard(suffix) => self.wildcard.get(suffix.as_str()),
            HostMatch::DeepWildcard(suffix) => self.deep_wildcard.get(suffix.as_str()),
            HostMatch::Any => self.any.as_ref(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Arc<VirtualHost>> {
        self.exact
            .values()
            .chain(self.wildcard.values())
            .chain(self.deep_wildcard.values())
            .chain(self.any.iter())
    }

    #[inline]
    fn find(&self, host: &str, path: &str, facts: &impl Facts) -> Found<'_> {
        if let Some(vhost) = self.exact.get(host) {
            match vhost.find(path, facts) {
                Found::Next => {}
                found => return found,
            }
        }
        if !self.wildcard.is_empty()
            && let Some(suffix) = HostMatch::wildcard_suffix(host)
            && let Some(vhost) = self.wildcard.get(suffix)
        {
            match vhost.find(path, facts) {
                Found::Next => {}
                found => return found,
            }
        }
        // Same rule for the first label as one-label wildcards: `.example.com` is no name under it.
        if !self.deep_wildcard.is_empty() && HostMatch::wildcard_suffix(host).is_some() {
            // Longest suffix first: `a.b.example.com` tries `b.example.com`, then `example.com`.
            // Bounded by the host's labels.
            let mut rest = host;
            while let Some((_, suffix)) = rest.split_once('.') {
                if let Some(vhost) = self.deep_wildcard.get(suffix) {
                    match vhost.find(path, facts) {
                        Found::Next => {}
                        found => return found,
                    }
                }
                rest = suffix;
            }
        }
        match self.any.as_ref().map(|vhost| vhost.find(path, facts)) {
            Some(Found::Route(route)) => Found::Route(route),
            _ => Found::Next,
        }
    }
}

// === impl VirtualHost ===

impl VirtualHost {
    /// One listener's view of a host (`view`: `Some(tls)`; `None` takes every route). `None`
    /// when the host has no route there and is not exclusive: it is unknown on that listener.
    fn build(
        vhost: &VirtualHostSpec,
        routes: &[(Arc<Route>, &PathSpec)],
        view: Option<bool>,
        clean: bool,
        parts: &mut Parts<'_, impl BuildParts>,
        warnings: &mut Vec<BuildWarning>,
    ) -> Option<Self> {
        let mut builder = PathTableBuilder::default();
        // Ranked on every listener, whichever paths carry the conditions: the compile ranks them all.
        if is_ranked(vhost) {
            builder.ranked();
        }
        let mut held = Vec::with_capacity(routes.len());
        for (route, path) in routes {
            if view.is_some_and(|tls| !path.options.listeners.serves(tls)) {
                continue;
            }
            builder.add(&path.path, path.kind, route.clone());
            held.push(route.clone());
            if path.kind == PathKind::CharPrefix && path.path.len() > 1 && path.path.ends_with('/') {
                let redirect = slash_redirect(route, path, parts);
                builder.add_slash_redirect(&path.path, redirect.clone());
                held.push(redirect);
            }
        }
        if held.is_empty() && !vhost.exclusive {
            // Unknown on this listener: requests fall to wildcards, host-less rules, the default.
            return None;
        }
        let (paths, rejected) = builder.build();
        let clean = clean && rejected.is_empty();
        // Both listener views reject the same patterns; report them once.
        if view != Some(true) {
            warnings.extend(rejected.into_iter().map(|(pattern, reason)| BuildWarning {
                host: vhost.host.clone(),
                pattern,
                reason,
            }));
        }
        Some(VirtualHost {
            paths,
            exclusive: vhost.exclusive,
            clean,
            routes: held.into_boxed_slice(),
        })
    }

    #[inline]
    fn find(&self, path: &str, facts: &impl Facts) -> Found<'_> {
        match self.paths.lookup(path, facts) {
            Some(route) => Found::Route(route),
            None if self.exclusive => Found::Stop,
            None => Found::Next,
        }
    }
}

/// Whether some path of the host carries request conditions: it is ranked.
fn is_ranked(vhost: &VirtualHostSpec) -> bool {
    vhost.paths.iter().any(|path| path.options.conditions.is_some())
}

/// The 301 from `/abc` to `/abc/` that a `CharPrefix` rule `/abc/` gives, as nginx does.
fn slash_redirect(route: &Arc<Route>, path: &PathSpec, parts: &mut Parts<'_, impl BuildParts>) -> Arc<Route> {
    let name: Arc<str> = format!("{} (add slash)", route.name).into();
    Arc::new(Route {
        stats: parts.stats(&name, None),
        name,
        source: route.source.clone(),
        upstream: route.upstream.clone(),
        ssl_redirect: false,
        redirect: Some(Box::new(RedirectSpec {
            code: 301,
            scheme: None,
            host: None,
            port: None,
            path: Some(path.path.clone()),
            drop_query: false,
            location: None,
            replace_prefix: None,
            rewritten: false,
            www: false,
        })),
        client_protocol_header: None,
        rules: route.rules.clone(),
    })
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

mod changed;
mod ports;
#[cfg(test)]
mod tests;
