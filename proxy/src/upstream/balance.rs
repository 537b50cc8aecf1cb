//! Power of two choices on in-flight requests: cheap, needs no shared lock, and keeps new
//! connections spread across every endpoint instead of piling onto the first.

use std::sync::{Arc, atomic::Ordering};

use super::{Endpoint, Upstream};

/// Counts a request against its endpoint until dropped (after the response body ends).
pub struct EndpointGuard {
    endpoint: Arc<Endpoint>,
}

impl Upstream {
    /// Picks an endpoint not among `tried` (indexes into `endpoints`), or `None` when all were.
    pub fn pick(&self, tried: &[usize]) -> Option<usize> {
        let endpoints = &self.endpoints;
        let load = |i: usize| endpoints[i].in_flight();
        if tried.is_empty() {
            return match endpoints.len() {
                0 => None,
                1 => Some(0),
                n => {
                    let a = fastrand::usize(..n);
                    let b = (a + 1 + fastrand::usize(..n - 1)) % n;
                    Some(if load(b) < load(a) { b } else { a })
                }
            };
        }
        let candidates: Vec<usize> = (0..endpoints.len()).filter(|i| !tried.contains(i)).collect();
        match candidates.len() {
            0 => None,
            1 => Some(candidates[0]),
            n => {
                let a = candidates[fastrand::usize(..n)];
                let b = candidates[fastrand::usize(..n)];
                Some(if load(b) < load(a) { b } else { a })
            }
        }
    }
}

// === impl EndpointGuard ===

impl EndpointGuard {
    pub fn new(endpoint: Arc<Endpoint>) -> Self {
        endpoint.in_flight.fetch_add(1, Ordering::Relaxed);
        EndpointGuard { endpoint }
    }

    pub fn endpoint(&self) -> &Arc<Endpoint> {
        &self.endpoint
    }
}

impl Drop for EndpointGuard {
    fn drop(&mut self) {
        self.endpoint.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{metrics::UpstreamStats, routes::spec::UpstreamProtocol};

    fn mk_upstream(n: u16) -> Upstream {
        let endpoints = (0..n)
            .map(|i| Arc::new(Endpoint::new(([127, 0, 0, 1], 1000 + i).into())))
            .collect();
        Upstream::new(
            "ns/svc:80",
            UpstreamProtocol::Http1,
            endpoints,
            UpstreamStats::default(),
        )
    }

    #[test]
    fn empty_upstream_has_nothing_to_pick() {
        assert_eq!(mk_upstream(0).pick(&[]), None);
    }

    #[test]
    fn tried_endpoints_are_never_picked_again() {
        let upstream = mk_upstream(3);
        for _ in 0..200 {
            let pick = upstream.pick(&[0, 2]).expect("one endpoint left");
            assert_eq!(pick, 1);
        }
        assert_eq!(upstream.pick(&[0, 1, 2]), None);
    }

    #[test]
    fn busy_endpoints_are_avoided_and_all_idle_ones_get_work() {
        let upstream = mk_upstream(10);
        // Hold a guard for each pick, as concurrent requests would: p2c must spread them.
        let mut guards = Vec::new();
        for _ in 0..100 {
            let i = upstream.pick(&[]).expect("endpoints");
            guards.push(EndpointGuard::new(upstream.endpoints[i].clone()));
        }
        let loads: Vec<usize> = upstream.endpoints.iter().map(|e| e.in_flight()).collect();
        assert!(loads.iter().all(|&l| l > 0), "every endpoint got work: {loads:?}");
        assert!(
            loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 6,
            "balanced: {loads:?}"
        );
        drop(guards);
        assert!(upstream.endpoints.iter().all(|e| e.in_flight() == 0));
    }
}
