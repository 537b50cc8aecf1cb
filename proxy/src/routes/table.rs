//! The immutable route table: built once per configuration, shared by every request.

use std::{collections::HashMap, fmt, sync::Arc};

use super::{
    paths::{PathTable, PathTableBuilder},
    spec::{BackendId, HostMatch, TableSpec},
};
use crate::{metrics::RouteStats, tls::CertificateIndex, upstream::Upstream};

/// What a request that matched needs: where to go and what to count.
pub struct Route {
    /// `host` + `path` as configured, for logs and metrics.
    pub name: Arc<str>,
    /// The object that asked for this route, `namespace/name`.
    pub source: Arc<str>,
    pub upstream: Arc<Upstream>,
    pub stats: RouteStats,
    /// Answer plain-HTTP requests with a 308 to HTTPS.
    pub ssl_redirect: bool,
}

pub struct RouteTable {
    spec: Arc<TableSpec>,
    exact_hosts: HashMap<Box<str>, PathTable>,
    /// Keyed by the suffix after `*.`.
    wildcard_hosts: HashMap<Box<str>, PathTable>,
    any_host: Option<PathTable>,
    default_route: Option<Arc<Route>>,
    certificates: CertificateIndex,
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
        self.upstream.stats.record(status);
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
    /// caller can reuse the previous table's); `stats` hands out per-route counters.
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
        let mut exact_hosts = HashMap::new();
        let mut wildcard_hosts = HashMap::new();
        let mut any_host = None;
        for vhost in &spec.hosts {
            let mut builder = PathTableBuilder::default();
            for path in &vhost.paths {
                if !spec.backends.contains_key(&path.backend) {
                    warnings.push(BuildWarning {
                        host: vhost.host.clone(),
                        pattern: path.path.clone(),
                        reason: format!("backend {} is not in the table", path.backend),
                    });
                    continue;
                }
                let name = format!("{}{}", vhost.host, path.path);
                let route = Route {
                    stats: stats(&name, &path.source),
                    name: name.into(),
                    source: path.source.as_str().into(),
                    upstream: upstream_for(&path.backend),
                    ssl_redirect: path.ssl_redirect,
                };
                builder.add(&path.path, path.kind, Arc::new(route));
            }
            let (table, rejected) = builder.build();
            warnings.extend(rejected.into_iter().map(|(pattern, reason)| BuildWarning {
                host: vhost.host.clone(),
                pattern,
                reason,
            }));
            match &vhost.host {
                HostMatch::Exact(host) => {
                    exact_hosts.insert(host.as_str().into(), table);
                }
                HostMatch::Wildcard(suffix) => {
                    wildcard_hosts.insert(suffix.as_str().into(), table);
                }
                HostMatch::Any => any_host = Some(table),
            }
        }
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
                })
            });
        let certificates = CertificateIndex::default();
        let table = RouteTable {
            spec,
            exact_hosts,
            wildcard_hosts,
            any_host,
            default_route,
            certificates,
        };
        (table, warnings)
    }

    /// Finds the route for a normalised host (see [`super::normalize_host`]) and a path
    /// without its query. Exact host, then wildcard, then host-less rules, then the default.
    pub fn lookup(&self, host: &str, path: &str) -> Option<&Arc<Route>> {
        if let Some(route) = self.exact_hosts.get(host).and_then(|paths| paths.lookup(path)) {
            return Some(route);
        }
        if !self.wildcard_hosts.is_empty()
            && let Some((_, suffix)) = host.split_once('.')
            && let Some(route) = self.wildcard_hosts.get(suffix).and_then(|paths| paths.lookup(path))
        {
            return Some(route);
        }
        if let Some(route) = self.any_host.as_ref().and_then(|paths| paths.lookup(path)) {
            return Some(route);
        }
        self.default_route.as_ref()
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

#[cfg(test)]
mod tests;
