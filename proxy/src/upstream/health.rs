//! Passive health (outlier ejection): an endpoint failing several tries in a row is left out of
//! the choice for a while, longer each time it is ejected again, like Envoy's outlier detection
//! and nginx's `max_fails`. The state lives in the `Endpoint`, shared by every worker.
//!
//! ```text
//! try fails ─▶ failures += 1 ─▶ threshold reached and under the cap? ─▶ ejected until now + base × n
//! try answers ─▶ failures = 0          pick: ejected_until passed ─▶ back in rotation (logged once)
//! ```

use std::{
    sync::atomic::{AtomicU32, AtomicU64, Ordering},
    time::Instant,
};

use tracing::{info, warn};

use super::Upstream;
use crate::spec::OutlierOptions;

/// An endpoint ejected this many times stays out `MAX_EJECTIONS × base` at the longest.
const MAX_EJECTIONS: u32 = 10;

/// One endpoint's failures and ejection, updated by every worker with relaxed atomics.
#[derive(Debug, Default)]
pub struct Health {
    /// Failed tries since its last answer.
    failures: AtomicU32,
    /// Nanoseconds since [`super::clock::epoch`] until which it is out; 0 while in rotation.
    ejected_until: AtomicU64,
    /// Times ejected, for the growing ejection time.
    ejections: AtomicU32,
}

fn nanos_since_epoch(now: Instant) -> u64 {
    // At least 1: 0 means "not ejected".
    u64::try_from(super::clock::nanos(now)).unwrap_or(0).max(1)
}

// === impl Health ===

impl Health {
    /// Whether the endpoint is out of rotation at `now`. Reads the clock only while ejected.
    pub fn is_ejected(&self) -> bool {
        let until = self.ejected_until.load(Ordering::Relaxed);
        until != 0 && nanos_since_epoch(Instant::now()) < until
    }

    /// Whether the endpoint has an ejection deadline at all (passed or not).
    pub(super) fn has_deadline(&self) -> bool {
        self.ejected_until.load(Ordering::Relaxed) != 0
    }

    /// Takes the endpoint out for `length` from now, as an ejection would (for tests).
    #[cfg(test)]
    pub(crate) fn eject_for(&self, length: std::time::Duration) {
        let until = nanos_since_epoch(Instant::now() + length);
        self.ejected_until.store(until, Ordering::Relaxed);
    }

    /// Times this endpoint was ejected.
    pub fn ejections(&self) -> u32 {
        self.ejections.load(Ordering::Relaxed)
    }

    /// Failed tries in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures.load(Ordering::Relaxed)
    }
}

// === impl Upstream ===

impl Upstream {
    /// Records that endpoint `index` answered (`failed: false`) or failed a try; may eject it.
    /// Returns whether this call ejected it.
    pub fn record_try(&self, index: usize, failed: bool, options: &OutlierOptions) -> bool {
        let Some(endpoint) = self.endpoints.get(index) else {
            return false;
        };
        let health = &endpoint.health;
        if !failed {
            // Loaded first: a healthy endpoint's line is then only read, not written, per answer.
            if health.failures.load(Ordering::Relaxed) != 0 {
                health.failures.store(0, Ordering::Relaxed);
            }
            return false;
        }
        let failures = health.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if options.consecutive_failures == 0 || failures < options.consecutive_failures || health.is_ejected() {
            return false;
        }
        let ejected = self.endpoints.iter().filter(|e| e.health.is_ejected()).count();
        let cap = self.endpoints.len() * usize::from(options.max_ejected_percent.min(100)) / 100;
        if ejected >= cap {
            return false;
        }
        let ejections = health.ejections.fetch_add(1, Ordering::Relaxed) + 1;
        let out_for = options.base_ejection * ejections.min(MAX_EJECTIONS);
        let until = nanos_since_epoch(Instant::now() + out_for);
        health.ejected_until.store(until, Ordering::Relaxed);
        health.failures.store(0, Ordering::Relaxed);
        self.stats.ejected();
        warn!(backend = %self.id, endpoint = %endpoint.addr, failures, ejections, out_for = ?out_for, "Endpoint ejected");
        true
    }

    /// Puts back the endpoints whose ejection is over, logging each once; `pick` calls it when
    /// it meets an ejected one, so a quiet upstream costs nothing.
    pub(super) fn return_ejected(&self) {
        for endpoint in self.endpoints.iter() {
            let health = &endpoint.health;
            let until = health.ejected_until.load(Ordering::Relaxed);
            if until == 0 || health.is_ejected() {
                continue;
            }
            // One worker wins the swap and logs the return.
            if health
                .ejected_until
                .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                self.stats.returned();
                info!(backend = %self.id, endpoint = %endpoint.addr, "Endpoint returned from ejection");
            }
        }
    }

    /// Whether any endpoint has an ejection deadline (over or not).
    pub(super) fn any_deadline(&self) -> bool {
        self.endpoints.iter().any(|e| e.health.has_deadline())
    }
}

#[cfg(test)]
mod tests;
