//! The immutable route table: built once per configuration, shared by every request.

use std::{collections::HashMap, fmt, sync::Arc};

use http::HeaderName;

use super::{
    paths::{PathTable, PathTableBuilder},
    spec::{BackendId, HostMatch, PathKind, PathSpec, RedirectSpec, TableSpec},
};
use crate::{metrics::RouteStats, tls::CertificateIndex, upstream::Upstream};

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
    /// Answer with this redirect instead of forwarding.
    pub redirect: Option<RedirectSpec>,
    /// Set to `http` or `https` on forwarded requests, by listener.
    pub client_protocol_header: Option<HeaderName>,
}

pub struct RouteTable {
    spec: Arc<TableSpec>,
    /// Every route when all are served on both listeners; else the plain listener's.
    plain: Hosts,
    /// The TLS listener's routes, when some route is limited to one listener.
    tls: Option<Hosts>,
    default_route: Option<Arc<Route>>,
    certificates: CertificateIndex,
}

/// The virtual hosts one listener serves.
#[derive(Default)]
struct Hosts {
    exact: HashMap<Box<str>, VirtualHost>,
    /// Keyed by the suffix after `*.`.
    wildcard: HashMap<Box<str>, VirtualHost>,
    /// Keyed by the suffix after `*.`; matched from the longest suffix down.
    deep_wildcard: HashMap<Box<str>, VirtualHost>,
    any: Option<VirtualHost>,
}

struct VirtualHost {
    paths: PathTable,
    /// No match here is a 404, not a fall-through (see `VirtualHostSpec::exclusive`).
    exclusive: bool,
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

// === impl Route ===

impl Route {
    /// Counts a response for this route and its backend.
    pub fn record(&self, status: http::StatusCode, elapsed: std::time::Duration) {
        self.stats.record(status, elapsed);
        if self.stats.has_backend() {
            self.upstream.stats.record(elapsed);
        }
    }
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
        mut upstream: impl FnMut(&BackendId) -> Arc<Upstream>,
        mut stats: impl FnMut(&str, &str) -> RouteStats,
    ) -> (Self, Vec<BuildWarning>) {
        let mut upstreams: HashMap<BackendId, Arc<Upstream>> = HashMap::new();
        let mut upstream_for = |id: &BackendId| {
            if let Some(found) = upstreams.get(id) {
                return found.clone();
            }
            let made = upstream(id);
            upstreams.insert(id.clone(), made.clone());
            made
        };
        let mut warnings = Vec::new();
        // Redirect routes forward nowhere; they share one upstream without endpoints.
        let nowhere = Arc::new(Upstream::new(
            "redirect",
            Default::default(),
            Vec::new(),
            Default::default(),
        ));
        let mut routes: Vec<Vec<(Arc<Route>, &PathSpec)>> = Vec::with_capacity(spec.hosts.len());
        for vhost in &spec.hosts {
            let mut built = Vec::with_capacity(vhost.paths.len());
            for path in &vhost.paths {
                let redirect = path.options.redirect.clone();
                if redirect.is_none() && !spec.backends.contains_key(&path.backend) {
                    warnings.push(BuildWarning {
                        host: vhost.host.clone(),
                        pattern: path.path.clone(),
                        reason: format!("backend {} is not in the table", path.backend),
                    });
                    continue;
                }
                let client_protocol_header = match path.options.client_protocol_header.as_deref() {
                    None => None,
                    Some(name) => match HeaderName::from_bytes(name.as_bytes()) {
                        Ok(name) => Some(name),
                        Err(error) => {
                            warnings.push(BuildWarning {
                                host: vhost.host.clone(),
                                pattern: path.path.clone(),
                                reason: format!("client protocol header {name:?}: {error}"),
                            });
                            continue;
                        }
                    },
                };
                let name = format!("{}{}", vhost.host, path.path);
                let upstream = match redirect {
                    Some(_) => nowhere.clone(),
                    None => upstream_for(&path.backend),
                };
                // Metrics name the backend a route forwards to; a redirect forwards nowhere.
                let backend = if redirect.is_some() { "" } else { path.backend.as_str() };
                let route = Route {
                    stats: stats(&name, backend),
                    name: name.into(),
                    source: path.source.as_str().into(),
                    upstream,
                    ssl_redirect: path.ssl_redirect,
                    redirect,
                    client_protocol_header,
                };
                built.push((Arc::new(route), path));
            }
            routes.push(built);
        }
        let scoped = spec
            .hosts
            .iter()
            .flat_map(|vhost| &vhost.paths)
            .any(|path| !path.options.listeners.is_both());
        let mut slash_stats = |name: &str, source: &str| stats(name, source);
        let plain = Hosts::build(&spec, &routes, scoped.then_some(false), &mut slash_stats, &mut warnings);
        let tls = scoped.then(|| Hosts::build(&spec, &routes, Some(true), &mut slash_stats, &mut warnings));
        let default_route = spec
            .default_backend
            .as_ref()
            .filter(|id| spec.backends.contains_key(*id))
            .map(|id| {
                Arc::new(Route {
                    name: "default".into(),
                    source: "default".into(),
                    stats: stats("default", id),
                    upstream: upstream_for(id),
                    ssl_redirect: false,
                    redirect: None,
                    client_protocol_header: None,
                })
            });
        let certificates = CertificateIndex::default();
        let table = RouteTable {
            spec,
            plain,
            tls,
            default_route,
            certificates,
        };
        (table, warnings)
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
        let hosts = match (&self.tls, tls) {
            (Some(hosts), true) => hosts,
            _ => &self.plain,
        };
        match hosts.find(host, path) {
            Found::Route(route) => Some(route),
            Found::Stop => None,
            Found::Next => self.default_route.as_ref(),
        }
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

// === impl Hosts ===

impl Hosts {
    /// The hosts serving `tls` (or plain) requests; `None` takes every route.
    fn build(
        spec: &TableSpec,
        routes: &[Vec<(Arc<Route>, &PathSpec)>],
        tls: Option<bool>,
        stats: &mut impl FnMut(&str, &str) -> RouteStats,
        warnings: &mut Vec<BuildWarning>,
    ) -> Self {
        let mut hosts = Hosts::default();
        for (vhost, built) in spec.hosts.iter().zip(routes) {
            let mut builder = PathTableBuilder::default();
            let mut any = false;
            for (route, path) in built {
                if tls.is_some_and(|tls| !path.options.listeners.serves(tls)) {
                    continue;
                }
                any = true;
                builder.add(&path.path, path.kind, route.clone());
                if path.kind == PathKind::CharPrefix && path.path.len() > 1 && path.path.ends_with('/') {
                    builder.add_slash_redirect(&path.path, slash_redirect(route, path, stats));
                }
            }
            if !any && !vhost.exclusive {
                // Unknown on this listener: requests fall to wildcards, host-less rules, the default.
                continue;
            }
            let (paths, rejected) = builder.build();
            // Both listener views reject the same patterns; report them once.
            if tls != Some(true) {
                warnings.extend(rejected.into_iter().map(|(pattern, reason)| BuildWarning {
                    host: vhost.host.clone(),
                    pattern,
                    reason,
                }));
            }
            let table = VirtualHost {
                paths,
                exclusive: vhost.exclusive,
            };
            match &vhost.host {
                HostMatch::Exact(host) => {
                    hosts.exact.insert(host.as_str().into(), table);
                }
                HostMatch::Wildcard(suffix) => {
                    hosts.wildcard.insert(suffix.as_str().into(), table);
                }
                HostMatch::DeepWildcard(suffix) => {
                    hosts.deep_wildcard.insert(suffix.as_str().into(), table);
                }
                HostMatch::Any => hosts.any = Some(table),
            }
        }
        hosts
    }

    fn find(&self, host: &str, path: &str) -> Found<'_> {
        if let Some(vhost) = self.exact.get(host) {
            match vhost.find(path) {
                Found::Next => {}
                found => return found,
            }
        }
        if !self.wildcard.is_empty()
            && let Some(suffix) = HostMatch::wildcard_suffix(host)
            && let Some(vhost) = self.wildcard.get(suffix)
        {
            match vhost.find(path) {
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
                    match vhost.find(path) {
                        Found::Next => {}
                        found => return found,
                    }
                }
                rest = suffix;
            }
        }
        match self.any.as_ref().map(|vhost| vhost.find(path)) {
            Some(Found::Route(route)) => Found::Route(route),
            _ => Found::Next,
        }
    }
}

// === impl VirtualHost ===

impl VirtualHost {
    fn find(&self, path: &str) -> Found<'_> {
        match self.paths.lookup(path) {
            Some(route) => Found::Route(route),
            None if self.exclusive => Found::Stop,
            None => Found::Next,
        }
    }
}

/// The 301 from `/abc` to `/abc/` that a `CharPrefix` rule `/abc/` gives, as nginx does.
fn slash_redirect(route: &Arc<Route>, path: &PathSpec, stats: &mut impl FnMut(&str, &str) -> RouteStats) -> Arc<Route> {
    let name = format!("{} (add slash)", route.name);
    Arc::new(Route {
        stats: stats(&name, ""),
        name: name.into(),
        source: route.source.clone(),
        upstream: route.upstream.clone(),
        ssl_redirect: false,
        redirect: Some(RedirectSpec {
            code: 301,
            scheme: None,
            host: None,
            port: None,
            path: Some(path.path.clone()),
        }),
        client_protocol_header: None,
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

#[cfg(test)]
mod tests;
