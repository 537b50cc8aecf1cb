//! Endpoint choice: power of two choices on in-flight requests, among the endpoints the
//! request should prefer.
//!
//! ```text
//! preferred (forNodes, else forZones hints naming us) ─ none healthy and untried ─▶ all endpoints
//!   healthy, untried ─ none ─▶ ejected but untried (fail open) ─ none ─▶ nothing (the caller's 503)
//! ```
//! p2c is cheap, needs no shared lock, and keeps new connections spread across every endpoint
//! instead of piling onto the first. With slow start, a new endpoint is drawn in proportion to
//! its weight, which grows over the window. A route's canary, hash key and affinity cookie
//! (`route.rs`) are decided before this choice.

use std::{
    sync::{Arc, atomic::Ordering},
    time::{Duration, Instant},
};

use super::{Endpoint, Upstream};

pub mod affinity;
pub mod canary;
pub mod hash;
pub mod route;
pub mod vars;

/// Counts a request against its endpoint until dropped (after the response body ends).
pub struct EndpointGuard {
    endpoint: Arc<Endpoint>,
}

/// A warming endpoint's weight never drops below this, so it still gets a trickle to warm on.
const MIN_WEIGHT: f64 = 0.05;

impl Upstream {
    /// Picks an endpoint not among `tried` (indexes into `endpoints`), or `None` when all were.
    /// `slow_start`: the window over which a new endpoint's weight grows to 1.
    pub fn pick(&self, tried: &[usize], slow_start: Option<Duration>) -> Option<usize> {
        let n = self.endpoints.len();
        let warming = slow_start.is_some_and(|window| self.any_warming(window));
        if tried.is_empty() && self.preferred.is_empty() && !warming {
            // The common case costs two random numbers and two loads.
            match n {
                0 => return None,
                1 => return Some(0),
                _ => {
                    let a = fastrand::usize(..n);
                    let b = (a + 1 + fastrand::usize(..n - 1)) % n;
                    // An ejection (even one just over) takes the slow path, which returns it.
                    if !self.endpoints[a].health.has_deadline() && !self.endpoints[b].health.has_deadline() {
                        return Some(self.lighter(a, b));
                    }
                }
            }
        }
        if self.any_deadline() {
            self.return_ejected();
        }
        let candidates = self.candidates(tried);
        self.choose(&candidates, slow_start.filter(|_| warming))
    }

    /// The endpoints to choose among, by the fall-back order in the module docs.
    pub(super) fn candidates(&self, tried: &[usize]) -> Vec<usize> {
        let usable = |i: &usize| !tried.contains(i) && !self.endpoints[*i].health.is_ejected();
        let preferred: Vec<usize> = self.preferred.iter().copied().filter(usable).collect();
        if !preferred.is_empty() {
            return preferred;
        }
        let healthy: Vec<usize> = (0..self.endpoints.len()).filter(usable).collect();
        if !healthy.is_empty() {
            return healthy;
        }
        (0..self.endpoints.len()).filter(|i| !tried.contains(i)).collect()
    }

    /// p2c among `candidates`, drawing each by weight while some endpoint warms up.
    fn choose(&self, candidates: &[usize], slow_start: Option<Duration>) -> Option<usize> {
        match candidates.len() {
            0 => None,
            1 => Some(candidates[0]),
            n => {
                let Some(window) = slow_start else {
                    let a = candidates[fastrand::usize(..n)];
                    let b = candidates[fastrand::usize(..n)];
                    return Some(self.lighter(a, b));
                };
                let now = Instant::now();
                let weights: Vec<f64> = candidates
                    .iter()
                    .map(|&i| self.endpoints[i].weight(now, window))
                    .collect();
                let (a, b) = (draw(candidates, &weights), draw(candidates, &weights));
                Some(self.lighter(a, b))
            }
        }
    }

    fn lighter(&self, a: usize, b: usize) -> usize {
        if self.endpoints[b].in_flight() < self.endpoints[a].in_flight() {
            b
        } else {
            a
        }
    }

    /// Whether some endpoint is still within its slow-start `window`; marks the ones past it.
    fn any_warming(&self, window: Duration) -> bool {
        if self.settled.load(Ordering::Relaxed) {
            return false;
        }
        let mut warming = false;
        let now = Instant::now();
        for endpoint in self.endpoints.iter() {
            if endpoint.warm.load(Ordering::Relaxed) {
                continue;
            }
            if endpoint.age(now) >= window {
                endpoint.warm.store(true, Ordering::Relaxed);
            } else {
                warming = true;
            }
        }
        if !warming {
            self.settled.store(true, Ordering::Relaxed);
        }
        warming
    }
}

/// One of `candidates`, each drawn with a probability proportional to its weight.
fn draw(candidates: &[usize], weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut point = fastrand::f64() * total;
    for (&candidate, &weight) in candidates.iter().zip(weights) {
        if point < weight {
            return candidate;
        }
        point -= weight;
    }
    candidates[candidates.len() - 1]
}

// === impl Endpoint ===

impl Endpoint {
    /// Its share in the choice at `now`: from `MIN_WEIGHT` when new up to 1 once `window` passed.
    pub fn weight(&self, now: Instant, window: Duration) -> f64 {
        if window.is_zero() {
            return 1.0;
        }
        let age = self.age(now).as_secs_f64();
        (age / window.as_secs_f64()).clamp(MIN_WEIGHT, 1.0)
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
mod tests;
