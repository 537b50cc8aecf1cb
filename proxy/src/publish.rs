//! Publishing route tables: one writer ([`RoutePublisher`]), many lock-free readers ([`RouteReader`]).
//!
//! A publish swaps one `Arc<RouteTable>`: requests in flight keep the table they loaded, new
//! requests see the new one, no connection is touched. Unchanged backends keep their `Upstream`
//! and unchanged pods their `Endpoint`, so in-flight counts and metrics carry over.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use arc_swap::{ArcSwap, Guard};
use rustls::sign::CertifiedKey;

use crate::{
    metrics::{ProxyMetrics, RouteStats},
    routes::{
        BuildWarning, RouteTable,
        spec::{BackendSpec, CertificateId, CertificateSpec, HostMatch, TableSpec, TlsSpec},
    },
    tls::{CertificateIndex, LoadedCertificate},
    upstream::{Endpoint, Upstream},
};

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
    /// The live table's backends, for reuse by the next build.
    upstreams: HashMap<String, (BackendSpec, Arc<Upstream>)>,
    /// The live table's per-route counters, keyed by (route, backend): label lookups are the
    /// slow part of a build, and most routes survive a publish.
    route_stats: HashMap<(String, String), RouteStats>,
    /// The live table's parsed certificates: a Secret that did not change is not parsed again.
    certificates: HashMap<CertificateId, (CertificateSpec, Arc<CertifiedKey>)>,
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
                upstreams: HashMap::new(),
                route_stats: HashMap::new(),
                certificates: HashMap::new(),
            },
            reader,
        )
    }

    /// Builds and swaps in a table for `spec`, unless it equals the live one.
    pub fn publish(&mut self, spec: TableSpec) -> Published {
        let live = self.current.load();
        if self.ready.load(Ordering::Acquire) && **live.spec() == spec {
            return Published::Unchanged;
        }
        let endpoints: HashMap<SocketAddr, Arc<Endpoint>> = self
            .upstreams
            .values()
            .flat_map(|(_, upstream)| upstream.endpoints.iter())
            .map(|endpoint| (endpoint.addr, endpoint.clone()))
            .collect();
        let spec = Arc::new(spec);
        let mut next_upstreams = HashMap::with_capacity(spec.backends.len());
        let mut next_route_stats = HashMap::with_capacity(self.route_stats.len());
        let (mut table, mut warnings) = RouteTable::build(
            spec.clone(),
            |id| {
                let backend = spec.backends.get(id).cloned().unwrap_or_else(|| BackendSpec {
                    protocol: Default::default(),
                    endpoints: Vec::new(),
                });
                let upstream = match self.upstreams.get(id) {
                    Some((previous, upstream)) if *previous == backend => upstream.clone(),
                    _ => {
                        let members = backend
                            .endpoints
                            .iter()
                            .map(|addr| {
                                endpoints
                                    .get(addr)
                                    .cloned()
                                    .unwrap_or_else(|| Arc::new(Endpoint::new(*addr)))
                            })
                            .collect();
                        // Same backend, new endpoints: its counters carry on.
                        let stats = match self.upstreams.get(id) {
                            Some((_, previous)) => previous.stats.clone(),
                            None => self.metrics.upstream_stats(id),
                        };
                        Arc::new(Upstream::new(id, backend.protocol, members, stats))
                    }
                };
                next_upstreams.insert(id.clone(), (backend, upstream.clone()));
                upstream
            },
            |route, backend| {
                let key = (route.to_string(), backend.to_string());
                let stats = match self.route_stats.get(&key) {
                    Some(stats) => stats.clone(),
                    None => self.metrics.route_stats(route, backend),
                };
                next_route_stats.insert(key, stats.clone());
                stats
            },
        );
        // Routes and backends gone from the table take their series out of /metrics.
        for (key, stats) in &self.route_stats {
            if !next_route_stats.contains_key(key) {
                stats.retire();
            }
        }
        for (id, (_, upstream)) in &self.upstreams {
            if !next_upstreams.contains_key(id) {
                upstream.stats.retire();
            }
        }
        self.route_stats = next_route_stats;
        table.set_certificates(self.load_certificates(&spec.tls, &mut warnings));
        let gone = self
            .upstreams
            .keys()
            .filter(|id| !next_upstreams.contains_key(*id))
            .map(String::as_str);
        let changed = next_upstreams
            .iter()
            .filter(|(id, (spec, _))| {
                self.upstreams
                    .get(*id)
                    .is_none_or(|(previous, _)| previous.endpoints.len() != spec.endpoints.len())
            })
            .map(|(id, (_, upstream))| (id.as_str(), upstream.endpoints.len()));
        let total = next_upstreams.values().map(|(spec, _)| spec.endpoints.len()).sum();
        self.metrics.set_endpoints(gone, changed, total);
        self.upstreams = next_upstreams;
        self.current.store(Arc::new(table));
        self.ready.store(true, Ordering::Release);
        self.metrics.record_publish();
        Published::Swapped { warnings }
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
