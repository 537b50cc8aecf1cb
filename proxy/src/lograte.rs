//! Rate limits for repeated log lines on the request path: a backend failing thousands of
//! requests a second writes one line per second per distinct message, with the count of the
//! ones left out.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// Distinct keys remembered at most; past it the oldest window is forgotten wholesale.
const MAX_KEYS: usize = 1024;

#[derive(Debug)]
pub struct LogRate {
    interval: Duration,
    keys: Mutex<HashMap<String, Window>>,
}

#[derive(Debug)]
struct Window {
    logged: Instant,
    suppressed: u64,
}

// === impl LogRate ===

impl LogRate {
    pub fn per_second() -> Self {
        LogRate::new(Duration::from_secs(1))
    }

    pub fn new(interval: Duration) -> Self {
        LogRate {
            interval,
            keys: Mutex::new(HashMap::new()),
        }
    }

    /// `Some(suppressed)` when a line for `key` may be written now (`suppressed` lines were
    /// left out since the last one), `None` when this one is left out.
    pub fn admit(&self, key: &str) -> Option<u64> {
        self.admit_at(key, Instant::now())
    }

    fn admit_at(&self, key: &str, now: Instant) -> Option<u64> {
        let mut keys = self.keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(window) = keys.get_mut(key) {
            if now.saturating_duration_since(window.logged) < self.interval {
                window.suppressed += 1;
                return None;
            }
            let suppressed = std::mem::take(&mut window.suppressed);
            window.logged = now;
            return Some(suppressed);
        }
        if keys.len() >= MAX_KEYS {
            let interval = self.interval;
            keys.retain(|_, window| now.saturating_duration_since(window.logged) < interval);
            if keys.len() >= MAX_KEYS {
                keys.clear();
            }
        }
        keys.insert(
            key.to_string(),
            Window {
                logged: now,
                suppressed: 0,
            },
        );
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_within_the_interval_are_counted_and_reported_with_the_next_line() {
        let rate = LogRate::per_second();
        let start = Instant::now();
        assert_eq!(rate.admit_at("a", start), Some(0));
        for _ in 0..5 {
            assert_eq!(rate.admit_at("a", start + Duration::from_millis(500)), None);
        }
        assert_eq!(rate.admit_at("b", start + Duration::from_millis(500)), Some(0));
        assert_eq!(rate.admit_at("a", start + Duration::from_secs(1)), Some(5));
        assert_eq!(rate.admit_at("a", start + Duration::from_millis(1500)), None);
    }

    #[test]
    fn many_distinct_keys_stay_bounded() {
        let rate = LogRate::per_second();
        let now = Instant::now();
        for i in 0..(MAX_KEYS * 3) {
            assert_eq!(rate.admit_at(&format!("key {i}"), now), Some(0));
        }
        assert!(rate.keys.lock().expect("lock").len() <= MAX_KEYS);
    }
}
