//! Publishing route tables: one writer ([`RoutePublisher`]), many lock-free readers ([`RouteReader`]).
//!
//! A publish swaps one `Arc<RouteTable>`: requests in flight keep the table they loaded, new
//! requests see the new one, no connection is touched. Unchanged backends keep their `Upstream`
//! and unchanged pods their `Endpoint`, so in-flight counts and metrics carry over.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use arc_swap::{ArcSwap, Guard};
use rustls::sign::CertifiedKey;

use crate::{
    metrics::ProxyMetrics,
    routes::{BuildWarning, Rebuilt},
    spec::{BackendId, BackendSpec, CertificateId, CertificateSpec, HostMatch, TableSpec, TlsSpec, Topology},
    tls::CertificateIndex,
    upstream::{Endpoint, PodTls, classify},
};

mod resolver;
mod route_stats;
mod unchanged;

/// What a published table answers, for a caller that previews one (the controller's profile
/// tests look up routes and their redirects), and the data plane's own parsers, which the
/// compile asks before it puts a certificate or a regex location into a spec.
pub use crate::{
    metrics::RouteStats,
    routes::{Route, RouteTable, location_regex},
    tls::{LoadedCertificate, PodTlsError, pod_client_config, trusted_from_pem},
    upstream::Upstream,
};

use route_stats::RouteStatsIndex;

/// The redirect answers of a route, as the proxy writes them.
pub mod redirect {
    pub use crate::redirect::{Arrival, location, respond, to_https, to_https_trimmed};
}

/// Keys from our own configuration (backend ids, pod addresses), never a client's: no flood to resist.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Reads the current table; clone freely.
#[derive(Clone)]
pub struct RouteReader {
    current: Arc<ArcSwap<RouteTable>>,
    ready: Arc<AtomicBool>,
}

/// Purposefully not `Clone`: one source of truth publishes.
pub struct RoutePublisher {
    current: Arc<ArcSwap<RouteTable>>,
    ready: Arc<AtomicBool>,
    metrics: ProxyMetrics,
    /// The live table's backends by id (their specs are the live table's), for reuse by the next build.
    /// foldhash, not SipHash: a full publish hashes every backend id several times, and the ids
    /// come from our own configuration, so there is no flood to resist.
    upstreams: FastMap<BackendId, Arc<Upstream>>,
    /// The live table's per-route counters, by (route, backend): most routes survive a publish.
    route_stats: RouteStatsIndex,
    /// The live table's parsed certificates: a Secret that did not change is not parsed again.
    certificates: HashMap<CertificateId, (CertificateSpec, Arc<CertifiedKey>)>,
    /// This proxy's node and zone: which endpoints each upstream prefers.
    topology: Topology,
}

/// What differs between the live table's spec and the next one, as the compile that made both
/// knows it: hosts and backends added, removed or changed. A superset is fine; a host or backend
/// left out must be equal in both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecChanges {
    pub hosts: BTreeSet<HostMatch>,
    pub backends: BTreeSet<BackendId>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Published {
    /// Equal to the live table: nothing swapped.
    Unchanged,
    Swapped {
        warnings: Vec<BuildWarning>,
    },
}

// === impl RouteReader ===

impl RouteReader {
    /// The current table, for a short synchronous scope: clone what you need out of it
    /// and hold that across `.await`, never the guard.
    pub fn load(&self) -> Guard<Arc<RouteTable>> {
        self.current.load()
    }

    /// True once the first table has been published.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

// === impl RoutePublisher ===

impl RoutePublisher {
    pub fn new(metrics: ProxyMetrics) -> (Self, RouteReader) {
        let current = Arc::new(ArcSwap::from_pointee(RouteTable::empty()));
        let ready = Arc::new(AtomicBool::new(false));
        let reader = RouteReader {
            current: current.clone(),
            ready: ready.clone(),
        };
        (
            RoutePublisher {
                current,
                ready,
                metrics,
                upstreams: FastMap::default(),
                route_stats: RouteStatsIndex::default(),
                certificates: HashMap::new(),
                topology: Topology::default(),
            },
            reader,
        )
    }

    /// Sets this proxy's node and zone (`--node-name`, `--zone`), before the first publish.
    pub fn set_topology(&mut self, topology: Topology) {
        self.topology = topology;
    }

    /// Builds and swaps in a table for `spec`, unless it equals the live one. Hosts and
    /// backends equal to the live table's are taken over, not built again.
    pub fn publish(&mut self, spec: TableSpec) -> Published {
        let live = self.current.load_full();
        if self.ready.load(Ordering::Acquire) && unchanged::same_spec(live.spec(), &spec) {
            return Published::Unchanged;
        }
        self.swap(live, Arc::new(spec), None)
    }

    /// [`RoutePublisher::publish`] told what changed since the live table's spec: only those
    /// hosts and backends are compared and built, the others are taken over unseen. Falls back
    /// to the full publish when one table splits hosts by listener and the other does not (or
    /// nothing is live yet).
    pub fn publish_changed(&mut self, spec: TableSpec, changes: &SpecChanges) -> Published {
        let live = self.current.load_full();
        if !self.ready.load(Ordering::Acquire) || !RouteTable::rebuilds_changed(&spec, &live) {
            return self.publish(spec);
        }
        let old = live.spec();
        let host = |spec: &'_ TableSpec, host: &HostMatch| {
            let found = spec.hosts.binary_search_by(|vhost| vhost.host.cmp(host)).ok();
            found.map(|index| spec.hosts[index].clone())
        };
        let same = changes.hosts.iter().all(|name| host(old, name) == host(&spec, name))
            && changes
                .backends
                .iter()
                .all(|id| old.backends.get(id) == spec.backends.get(id))
            && (&old.default_backend, &old.tls) == (&spec.default_backend, &spec.tls)
            && unchanged::same_documents(&old.documents, &spec.documents)
            && old.hosts.len() == spec.hosts.len()
            && old.backends.len() == spec.backends.len();
        if same {
            return Published::Unchanged;
        }
        self.swap(live, Arc::new(spec), Some(changes))
    }

    /// Builds the table for `spec` next to `live` (only `changes`' hosts when given) and stores it.
    fn swap(&mut self, live: Arc<RouteTable>, spec: Arc<TableSpec>, changes: Option<&SpecChanges>) -> Published {
        let replaced = self.update_upstreams(&live.spec().backends, &spec.backends, changes.map(|c| &c.backends));
        let upstreams = &self.upstreams;
        let mut upstream = |id: &BackendId| match upstreams.get(id) {
            Some(upstream) => upstream.clone(),
            // The table asks only for backends of its spec, all made above.
            None => Arc::new(Upstream::new(id, Default::default(), Vec::new(), Default::default())),
        };
        let (route_stats, metrics) = (&mut self.route_stats, &self.metrics);
        // A full build may hand out counters for every path: room for them up front.
        let paths = match changes {
            Some(_) => 0,
            None => spec.hosts.iter().map(|vhost| vhost.paths.len()).sum(),
        };
        route_stats.begin(paths);
        let mut stats = |route: &Arc<str>, backend: Option<&Arc<str>>| route_stats.claim(metrics, route, backend);
        let rebuilt = match changes {
            Some(changes) => RouteTable::rebuild_changed(
                spec.clone(),
                &live,
                &changes.hosts,
                &changes.backends,
                &replaced,
                (&mut upstream, &mut stats),
            ),
            None => None,
        };
        let Rebuilt {
            mut table,
            mut warnings,
            dropped,
            ..
        } = match rebuilt {
            Some(rebuilt) => rebuilt,
            None => RouteTable::rebuild(spec.clone(), Some(&live), (&mut upstream, &mut stats)),
        };
        // Routes gone from the table take their series out of /metrics; a route built again
        // under the same name kept its counters above.
        for stats in &dropped {
            self.route_stats.release(stats);
        }
        table.set_certificates(self.load_certificates(&spec.tls, &mut warnings));
        drop(live);
        self.current.store(Arc::new(table));
        self.ready.store(true, Ordering::Release);
        self.metrics.record_publish();
        Published::Swapped { warnings }
    }

    /// Makes `self.upstreams` hold an `Upstream` for each of `next`: kept where the backend
    /// equals the live one, else made anew (keeping the counters of its id and the `Endpoint`s
    /// of addresses that stay). Retires the ones gone and sets the endpoint gauges that changed.
    /// With `only`, the other backends are known equal and not looked at. Returns the upstreams
    /// replaced or retired (routes to them must be built again).
    fn update_upstreams(
        &mut self,
        live: &BTreeMap<BackendId, BackendSpec>,
        next: &BTreeMap<BackendId, BackendSpec>,
        only: Option<&BTreeSet<BackendId>>,
    ) -> HashSet<*const Upstream> {
        let differs = |(id, backend): &(&BackendId, &BackendSpec)| {
            live.get(*id) != Some(*backend) || !self.upstreams.contains_key(*id)
        };
        let changed: Vec<(&BackendId, &BackendSpec)> = match only {
            None => next.iter().filter(differs).collect(),
            Some(ids) => ids
                .iter()
                .filter_map(|id| next.get_key_value(id))
                .filter(differs)
                .collect(),
        };
        let added = changed
            .iter()
            .filter(|(id, _)| !self.upstreams.contains_key(*id))
            .count();
        let mut replaced = HashSet::new();
        let gone = self.retire_gone(next, only, added, &mut replaced);
        let made = self.make_upstreams(live, &changed, only);
        let counts: Vec<(&str, usize)> = made
            .iter()
            .filter(|(_, _, emptiness_changed)| *emptiness_changed)
            .map(|(id, upstream, _)| (id.as_str(), upstream.endpoints.len()))
            .collect();
        let total = next.values().map(|backend| backend.endpoints.len()).sum();
        self.metrics
            .set_endpoints(gone.iter().map(String::as_str), counts.into_iter(), total);
        self.upstreams.reserve(added);
        for (id, upstream, _) in made {
            if let Some(old) = self.upstreams.insert(id, upstream) {
                replaced.insert(Arc::as_ptr(&old));
            }
        }
        replaced
    }

    /// Takes out (and retires) the upstreams whose backend `next` no longer has; returns their
    /// ids. `added`: how many of `next` are new, so that counts alone can tell when none left.
    fn retire_gone(
        &mut self,
        next: &BTreeMap<BackendId, BackendSpec>,
        only: Option<&BTreeSet<BackendId>>,
        added: usize,
        replaced: &mut HashSet<*const Upstream>,
    ) -> Vec<BackendId> {
        let mut gone = Vec::new();
        match only {
            Some(ids) => {
                for id in ids.iter().filter(|id| !next.contains_key(*id)) {
                    if let Some(upstream) = self.upstreams.remove(id) {
                        upstream.stats.retire();
                        replaced.insert(Arc::as_ptr(&upstream));
                        gone.push(id.clone());
                    }
                }
            }
            // Counts alone tell when no backend left, without a lookup per backend.
            None if self.upstreams.len() + added != next.len() => {
                self.upstreams.retain(|id, upstream| {
                    let keep = next.contains_key(id);
                    if !keep {
                        upstream.stats.retire();
                        gone.push(id.clone());
                    }
                    keep
                });
            }
            None => {}
        }
        gone
    }

    /// A new `Upstream` for each changed backend, with whether its emptiness changed (for the
    /// `shunt_backend_without_endpoints` gauge).
    fn make_upstreams(
        &self,
        live: &BTreeMap<BackendId, BackendSpec>,
        changed: &[(&BackendId, &BackendSpec)],
        only: Option<&BTreeSet<BackendId>>,
    ) -> Vec<(BackendId, Arc<Upstream>, bool)> {
        // Pods that moved between backends keep their `Endpoint`: indexed only when needed.
        let mut every_endpoint: Option<FastMap<SocketAddr, Arc<Endpoint>>> = None;
        let mut made = Vec::with_capacity(changed.len());
        // One TLS client per distinct setting, built here, not per request.
        let mut clients: Vec<Arc<PodTls>> = Vec::new();
        for (id, backend) in changed {
            let previous = self.upstreams.get(*id);
            let members = backend
                .endpoints
                .iter()
                .map(|addr| {
                    let own = previous.and_then(|upstream| {
                        let found = upstream.endpoints.binary_search_by(|endpoint| endpoint.addr.cmp(addr));
                        found.ok().map(|index| upstream.endpoints[index].clone())
                    });
                    // Told what changed, a pod that moved left a backend that changed too.
                    own.unwrap_or_else(|| {
                        let index = every_endpoint.get_or_insert_with(|| self.index_endpoints(only));
                        index
                            .get(addr)
                            .cloned()
                            .unwrap_or_else(|| Arc::new(Endpoint::new(*addr)))
                    })
                })
                .collect();
            // Same backend, new endpoints: its counters carry on.
            let stats = match previous {
                Some(previous) => previous.stats.clone(),
                None => self.metrics.upstream_stats(id),
            };
            // `shunt_backend_without_endpoints` lists exactly the backends with none (a new one
            // was never listed): only a backend that gains its first or loses its last endpoint
            // changes it, so a new backend costs no label lookup.
            let was_empty = live.get(*id).is_some_and(|old| old.endpoints.is_empty());
            let (preferred, locality) = classify(&self.topology, &backend.endpoints, &backend.topology);
            let tls = backend.tls.as_ref().map(|spec| {
                let kept = previous.and_then(|upstream| upstream.tls.clone()).into_iter();
                let known = kept.chain(clients.iter().cloned()).find(|client| client.spec == *spec);
                known.unwrap_or_else(|| {
                    let client = Arc::new(PodTls::new(id, spec.clone()));
                    clients.push(client.clone());
                    client
                })
            });
            let upstream = Upstream::new(id, backend.protocol, members, stats)
                .with_topology(preferred, locality)
                .with_tls(tls);
            made.push((
                (*id).clone(),
                Arc::new(upstream),
                was_empty != backend.endpoints.is_empty(),
            ));
        }
        made
    }

    /// The live endpoints by address: of the backends in `only`, or of all.
    fn index_endpoints(&self, only: Option<&BTreeSet<BackendId>>) -> FastMap<SocketAddr, Arc<Endpoint>> {
        let sources: Vec<&Arc<Upstream>> = match only {
            Some(ids) => ids.iter().filter_map(|id| self.upstreams.get(id)).collect(),
            None => self.upstreams.values().collect(),
        };
        sources
            .into_iter()
            .flat_map(|upstream| upstream.endpoints.iter())
            .map(|endpoint| (endpoint.addr, endpoint.clone()))
            .collect()
    }

    /// Indexes the table's certificates, reusing parsed keys whose PEM did not change.
    fn load_certificates(&mut self, tls: &TlsSpec, warnings: &mut Vec<BuildWarning>) -> CertificateIndex {
        let mut loaded = HashMap::with_capacity(tls.certificates.len());
        for (id, spec) in &tls.certificates {
            let key = match self.certificates.remove(id) {
                Some((previous, key)) if previous == *spec => key,
                _ => match LoadedCertificate::from_pem(&spec.chain_pem, &spec.key_pem) {
                    Ok(certificate) => certificate.key,
                    Err(error) => {
                        // Compile checked it already; this only guards hand-built specs.
                        warnings.push(BuildWarning {
                            host: HostMatch::Any,
                            pattern: id.clone(),
                            reason: error.to_string(),
                        });
                        continue;
                    }
                },
            };
            loaded.insert(id.clone(), (spec.clone(), key));
        }
        let mut index = CertificateIndex::default();
        for (host, id) in &tls.hosts {
            if let Some((_, key)) = loaded.get(id) {
                index.insert(host, key.clone());
            }
        }
        if let Some((_, key)) = tls.default.as_ref().and_then(|id| loaded.get(id)) {
            index.set_default(key.clone());
        }
        self.certificates = loaded;
        index
    }

    pub fn reader(&self) -> RouteReader {
        RouteReader {
            current: self.current.clone(),
            ready: self.ready.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
