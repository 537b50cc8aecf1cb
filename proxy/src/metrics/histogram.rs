//! A latency histogram on atomics: observing is a bucket search and two relaxed adds, never a
//! lock (prometheus-client's `Histogram` takes a mutex on every `observe`). The global ones are
//! split in shards, one per proxy worker thread as far as they go, so workers on different cores
//! do not bounce one cache line on every request.

use std::{
    cell::Cell,
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
};

use prometheus_client::{
    encoding::{EncodeMetric, MetricEncoder, NoLabelSet},
    metrics::{MetricType, TypedMetric},
};

/// Upper bounds of the latency buckets, in seconds: 0.5 ms doubling up to ~16 s.
pub const LATENCY_BOUNDS: [f64; 16] = [
    0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
];

/// Shards of a histogram every worker writes; more workers than this share them. A power of
/// two, like 1, so a mask picks the shard.
const SHARDS: usize = 8;

/// Cheap to clone; every clone observes into the same buckets.
#[derive(Clone, Debug)]
pub struct Histogram(Arc<[Shard]>);

/// Aligned so two shards never share a cache line.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard {
    /// One count per bound, then the `+Inf` bucket; not cumulative (the encoder sums them).
    counts: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    /// In nanoseconds, so adding is one `fetch_add` instead of a compare-and-swap loop on an f64.
    sum_nanos: AtomicU64,
}

/// The shard the current thread writes to, picked round-robin at its first observation.
fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    INDEX.with(|index| match index.get() {
        usize::MAX => {
            let picked = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
            index.set(picked);
            picked
        }
        picked => picked,
    })
}

/// `seconds` as whole nanoseconds; `as` saturates, so NaN and negatives give 0.
pub(super) fn nanos(seconds: f64) -> u64 {
    (seconds * 1e9) as u64
}

// === impl Histogram ===

impl Histogram {
    /// A histogram one series of one route or backend writes: a single shard.
    pub fn latency() -> Self {
        Histogram(Arc::new([Shard::default()]))
    }

    /// A histogram every request writes, from any worker.
    pub fn shared() -> Self {
        Histogram((0..SHARDS).map(|_| Shard::default()).collect())
    }

    /// Counts one observation of `seconds`; negative and NaN count as 0.
    pub fn observe(&self, seconds: f64) {
        let shard = &self.0[shard_index() & (self.0.len() - 1)];
        let bucket = LATENCY_BOUNDS.partition_point(|bound| *bound < seconds);
        shard.counts[bucket].fetch_add(1, Ordering::Relaxed);
        shard.sum_nanos.fetch_add(nanos(seconds), Ordering::Relaxed);
    }

    /// Observations per bucket (not cumulative), the `+Inf` bucket last.
    fn counts(&self) -> [u64; LATENCY_BOUNDS.len() + 1] {
        let mut counts = [0; LATENCY_BOUNDS.len() + 1];
        for shard in &*self.0 {
            for (total, count) in counts.iter_mut().zip(&shard.counts) {
                *total += count.load(Ordering::Relaxed);
            }
        }
        counts
    }

    /// Observations so far.
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.counts().iter().sum()
    }

    /// Sum of the observations so far, in seconds.
    pub fn sum(&self) -> f64 {
        let nanos: u64 = self.0.iter().map(|shard| shard.sum_nanos.load(Ordering::Relaxed)).sum();
        nanos as f64 / 1e9
    }
}

impl EncodeMetric for Histogram {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        let upper_bounds = LATENCY_BOUNDS.iter().copied().chain([f64::INFINITY]);
        let buckets: Vec<(f64, u64)> = upper_bounds.zip(self.counts()).collect();
        // The count is the buckets' own total, so `_count` always equals the `+Inf` bucket.
        let count = buckets.iter().map(|(_, count)| count).sum();
        encoder.encode_histogram::<NoLabelSet>(self.sum(), count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

impl TypedMetric for Histogram {
    const TYPE: MetricType = MetricType::Histogram;
}

#[cfg(test)]
mod tests {
    use prometheus_client::{encoding::text::encode, registry::Registry};

    use super::*;

    fn mk_encoded(histogram: &Histogram) -> String {
        let mut registry = Registry::default();
        registry.register("latency_seconds", "test", histogram.clone());
        let mut text = String::new();
        encode(&mut text, &registry).expect("encoding to a string");
        text
    }

    #[test]
    fn an_observation_on_a_bound_lands_in_that_bucket() {
        let histogram = Histogram::latency();
        histogram.observe(0.004);
        let text = mk_encoded(&histogram);
        assert!(text.contains(r#"latency_seconds_bucket{le="0.002"} 0"#), "{text}");
        assert!(text.contains(r#"latency_seconds_bucket{le="0.004"} 1"#), "{text}");
    }

    #[test]
    fn buckets_are_cumulative_and_count_matches_the_inf_bucket() {
        let histogram = Histogram::latency();
        for seconds in [0.0001, 0.003, 0.003, 20.0, f64::NAN, -1.0] {
            histogram.observe(seconds);
        }
        let text = mk_encoded(&histogram);
        assert!(text.contains(r#"latency_seconds_bucket{le="0.0005"} 3"#), "{text}");
        assert!(text.contains(r#"latency_seconds_bucket{le="0.004"} 5"#), "{text}");
        assert!(text.contains(r#"latency_seconds_bucket{le="16.384"} 5"#), "{text}");
        assert!(text.contains(r#"latency_seconds_bucket{le="+Inf"} 6"#), "{text}");
        assert!(text.contains("latency_seconds_count 6"), "{text}");
        assert_eq!(histogram.count(), 6);
        assert!((histogram.sum() - 20.0061).abs() < 1e-9, "{}", histogram.sum());
    }

    #[test]
    fn observations_from_many_threads_all_count_in_one_scrape() {
        let histogram = Histogram::shared();
        std::thread::scope(|scope| {
            for _ in 0..(SHARDS + 3) {
                scope.spawn(|| {
                    for _ in 0..100 {
                        histogram.observe(0.001);
                    }
                });
            }
        });
        let text = mk_encoded(&histogram);
        let total = (SHARDS + 3) * 100;
        assert!(text.contains(&format!("latency_seconds_count {total}\n")), "{text}");
        assert!(
            text.contains(&format!(r#"latency_seconds_bucket{{le="0.001"}} {total}"#)),
            "{text}"
        );
        assert!(
            (histogram.sum() - total as f64 * 0.001).abs() < 1e-9,
            "{}",
            histogram.sum()
        );
    }
}
