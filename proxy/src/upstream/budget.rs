//! The retry budget of one upstream: retries allowed in the current second are a minimum plus
//! a ratio of its recent requests (Linkerd's and Envoy's budgets, Gateway API's GEP-3388), so
//! retries cannot multiply the load of an upstream that is failing as a whole.

use std::{
    sync::{
        OnceLock,
        atomic::{AtomicU32, AtomicU64, Ordering},
    },
    time::Instant,
};

use crate::spec::BudgetOptions;

/// Requests and retries counted per second; races between workers only blur a count by a few.
#[derive(Debug, Default)]
pub struct RetryBudget {
    /// The second (since [`epoch`]) the counts below are for.
    second: AtomicU64,
    /// Requests of the second before.
    previous: AtomicU32,
    requests: AtomicU32,
    retries: AtomicU32,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

// === impl RetryBudget ===

impl RetryBudget {
    /// Counts a request arriving at `now` (first tries only).
    pub fn deposit(&self, now: Instant) {
        self.roll(now);
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes one retry at `now` if the budget allows it.
    pub fn withdraw(&self, now: Instant, options: &BudgetOptions) -> bool {
        self.roll(now);
        let recent = self
            .requests
            .load(Ordering::Relaxed)
            .max(self.previous.load(Ordering::Relaxed));
        // The ratio is a small float by construction; the product fits comfortably.
        let allowed = u64::from(options.min_per_second) + (f64::from(recent) * options.ratio.max(0.0)) as u64;
        let taken = self.retries.fetch_add(1, Ordering::Relaxed);
        if u64::from(taken) < allowed {
            return true;
        }
        self.retries.fetch_sub(1, Ordering::Relaxed);
        false
    }

    /// Starts a new second's counts when `now` is past the current one.
    fn roll(&self, now: Instant) {
        let second = now.saturating_duration_since(epoch()).as_secs();
        let current = self.second.load(Ordering::Relaxed);
        if second <= current {
            return;
        }
        if self
            .second
            .compare_exchange(current, second, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            let requests = self.requests.swap(0, Ordering::Relaxed);
            self.previous
                .store(if second == current + 1 { requests } else { 0 }, Ordering::Relaxed);
            self.retries.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests;
