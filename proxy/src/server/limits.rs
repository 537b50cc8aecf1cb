//! The per-process connection budget (`--max-connections`), shared by every listener of every
//! worker thread, and the back-off after failed accepts.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use super::metrics::ServerMetrics;

/// Counts open client connections against a maximum; clones share the count.
#[derive(Clone, Debug)]
pub struct ConnLimit {
    max: usize,
    open: Arc<AtomicUsize>,
    metrics: ServerMetrics,
}

/// One open connection; dropping it gives the slot back.
#[derive(Debug)]
pub struct ConnPermit {
    open: Arc<AtomicUsize>,
    metrics: ServerMetrics,
}

// === impl ConnLimit ===

impl ConnLimit {
    pub fn new(max: usize, metrics: ServerMetrics) -> Self {
        ConnLimit {
            max,
            open: Arc::new(AtomicUsize::new(0)),
            metrics,
        }
    }

    pub fn metrics(&self) -> &ServerMetrics {
        &self.metrics
    }

    /// A slot for a new connection, or `None` (counted as rejected) when all are taken.
    pub fn try_acquire(&self) -> Option<ConnPermit> {
        // fetch_add then undo keeps this lock-free; a burst may briefly overshoot the count by
        // the number of racing threads, never the number of admitted connections.
        if self.open.fetch_add(1, Ordering::AcqRel) >= self.max {
            self.open.fetch_sub(1, Ordering::AcqRel);
            self.metrics.rejected_connections.inc();
            return None;
        }
        self.metrics.open_connections.inc();
        Some(ConnPermit {
            open: self.open.clone(),
            metrics: self.metrics.clone(),
        })
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

impl Drop for ConnPermit {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.metrics.open_connections.dec();
    }
}

/// How long to wait after the `failures`-th accept error in a row: 10 ms doubling to 1 s, so
/// running out of file descriptors neither spins a core nor stalls accepting for long once
/// descriptors are free again.
pub fn accept_backoff(failures: u32) -> Duration {
    let millis = 10u64.saturating_mul(1 << failures.saturating_sub(1).min(7));
    Duration::from_millis(millis.min(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_beyond_the_maximum_are_refused_and_counted() {
        let limit = ConnLimit::new(2, ServerMetrics::default());
        let first = limit.try_acquire().expect("first slot");
        let second = limit.try_acquire().expect("second slot");
        assert!(limit.try_acquire().is_none());
        assert_eq!(limit.metrics().rejected_connections.get(), 1);
        assert_eq!(limit.metrics().open_connections.get(), 2);
        drop(first);
        assert_eq!(limit.open(), 1);
        let third = limit.try_acquire().expect("a freed slot is reusable");
        drop((second, third));
        assert_eq!(limit.open(), 0);
        assert_eq!(limit.metrics().open_connections.get(), 0);
    }

    #[test]
    fn clones_share_one_budget() {
        let limit = ConnLimit::new(1, ServerMetrics::default());
        let other = limit.clone();
        let _held = limit.try_acquire().expect("a slot");
        assert!(other.try_acquire().is_none());
    }

    #[test]
    fn accept_backoff_grows_and_stays_bounded() {
        assert_eq!(accept_backoff(1), Duration::from_millis(10));
        assert_eq!(accept_backoff(2), Duration::from_millis(20));
        assert!(accept_backoff(5) > accept_backoff(4));
        assert_eq!(accept_backoff(u32::MAX), Duration::from_secs(1));
        assert_eq!(accept_backoff(0), Duration::from_millis(10));
    }
}
