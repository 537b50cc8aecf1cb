//! Publishing route tables: one writer ([`RoutePublisher`]), many lock-free readers ([`RouteReader`]).
//!
//! A publish swaps one `Arc<RouteTable>`: requests in flight keep the table they loaded, new
//! requests see the new one, no connection is touched. Unchanged backends keep their `Upstream`
//! and unchanged pods their `Endpoint`, so in-flight counts and metrics carry over.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
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
        BuildWarning, Rebuilt, RouteTable,
        spec::{BackendId, BackendSpec, CertificateId, CertificateSpec, HostMatch, TableSpec, TlsSpec},
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
    /// The live table's backends by id (their specs are the live table's), for reuse by the next build.
    upstreams: HashMap<BackendId, Arc<Upstream>>,
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

    /// Builds and swaps in a table for `spec`, unless it equals the live one. Hosts and
    /// backends equal to the live table's are taken over, not built again.
    pub fn publish(&mut self, spec: TableSpec) -> Published {
        let live = self.current.load_full();
        if self.ready.load(Ordering::Acquire) && **live.spec() == spec {
            return Published::Unchanged;
        }
        let spec = Arc::new(spec);
        self.update_upstreams(&live.spec().backends, &spec.backends);
        let mut claimed: HashSet<(String, String)> = HashSet::new();
        let Rebuilt {
            mut table,
            mut warnings,
            dropped,
            ..
        } = RouteTable::rebuild(
            spec.clone(),
            Some(&live),
            |id| match self.upstreams.get(id) {
                Some(upstream) => upstream.clone(),
                // The table asks only for backends of its spec, all made above.
                None => Arc::new(Upstream::new(id, Default::default(), Vec::new(), Default::default())),
            },
            |route, backend| {
                let key = (route.to_string(), backend.to_string());
                let stats = match self.route_stats.get(&key) {
                    Some(stats) => stats.clone(),
                    None => {
                        let stats = self.metrics.route_stats(route, backend);
                        self.route_stats.insert(key.clone(), stats.clone());
                        stats
                    }
                };
                claimed.insert(key);
                stats
            },
        );
        // Routes gone from the table take their series out of /metrics; a route built again
        // under the same name kept its counters above.
        for key in dropped {
            if !claimed.contains(&key)
                && let Some(stats) = self.route_stats.remove(&key)
            {
                stats.retire();
            }
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
    fn update_upstreams(&mut self, live: &BTreeMap<BackendId, BackendSpec>, next: &BTreeMap<BackendId, BackendSpec>) {
        let changed: Vec<(&BackendId, &BackendSpec)> = next
            .iter()
            .filter(|(id, backend)| live.get(*id) != Some(*backend) || !self.upstreams.contains_key(*id))
            .collect();
        let added = changed
            .iter()
            .filter(|(id, _)| !self.upstreams.contains_key(*id))
            .count();
        let mut gone = Vec::new();
        // Counts alone tell when no backend left, without a lookup per backend.
        if self.upstreams.len() + added != next.len() {
            self.upstreams.retain(|id, upstream| {
                let keep = next.contains_key(id);
                if !keep {
                    upstream.stats.retire();
                    gone.push(id.clone());
                }
                keep
            });
        }
        // Pods that moved between backends keep their `Endpoint`: indexed only when needed.
        let mut every_endpoint: Option<HashMap<SocketAddr, Arc<Endpoint>>> = None;
        let mut made = Vec::with_capacity(changed.len());
        for (id, backend) in &changed {
            let previous = self.upstreams.get(*id);
            let members = backend
                .endpoints
                .iter()
                .map(|addr| {
                    let own = previous.and_then(|upstream| {
                        let found = upstream.endpoints.binary_search_by(|endpoint| endpoint.addr.cmp(addr));
                        found.ok().map(|index| upstream.endpoints[index].clone())
                    });
                    own.unwrap_or_else(|| {
                        let index = every_endpoint.get_or_insert_with(|| {
                            self.upstreams
                                .values()
                                .flat_map(|upstream| upstream.endpoints.iter())
                                .map(|endpoint| (endpoint.addr, endpoint.clone()))
                                .collect()
                        });
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
            let count_changed = live
                .get(*id)
                .is_none_or(|old| old.endpoints.len() != backend.endpoints.len());
            made.push((
                (*id).clone(),
                Arc::new(Upstream::new(id, backend.protocol, members, stats)),
                count_changed,
            ));
        }
        let counts: Vec<(&str, usize)> = made
            .iter()
            .filter(|(_, _, count_changed)| *count_changed)
            .map(|(id, upstream, _)| (id.as_str(), upstream.endpoints.len()))
            .collect();
        let total = next.values().map(|backend| backend.endpoints.len()).sum();
        self.metrics
            .set_endpoints(gone.iter().map(String::as_str), counts.into_iter(), total);
        for (id, upstream, _) in made {
            self.upstreams.insert(id, upstream);
        }
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
