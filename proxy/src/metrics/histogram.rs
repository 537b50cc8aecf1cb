//! A latency histogram on atomics: observing is a bucket search and two relaxed adds, never a
//! lock (prometheus-client's `Histogram` takes a mutex on every `observe`).

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use prometheus_client::{
    encoding::{EncodeMetric, MetricEncoder, NoLabelSet},
    metrics::{MetricType, TypedMetric},
};

/// Upper bounds of the latency buckets, in seconds: 0.5 ms doubling up to ~16 s.
pub const LATENCY_BOUNDS: [f64; 16] = [
    0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
];

/// Cheap to clone; every clone observes into the same buckets.
#[derive(Clone, Debug)]
pub struct Histogram(Arc<Buckets>);

#[derive(Debug)]
struct Buckets {
    /// Ascending; an observation lands in the first bucket whose bound is at least its value.
    bounds: &'static [f64],
    /// One count per bound, then the `+Inf` bucket; not cumulative (the encoder sums them).
    counts: Box<[AtomicU64]>,
    /// In nanoseconds, so adding is one `fetch_add` instead of a compare-and-swap loop on an f64.
    sum_nanos: AtomicU64,
}

// === impl Histogram ===

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram(Arc::new(Buckets {
            bounds,
            counts,
            sum_nanos: AtomicU64::new(0),
        }))
    }

    /// A latency histogram with [`LATENCY_BOUNDS`].
    pub fn latency() -> Self {
        Self::new(&LATENCY_BOUNDS)
    }

    /// Counts one observation of `seconds`; negative and NaN count as 0.
    pub fn observe(&self, seconds: f64) {
        let buckets = &*self.0;
        let index = buckets.bounds.partition_point(|bound| *bound < seconds);
        buckets.counts[index].fetch_add(1, Ordering::Relaxed);
        // `as` saturates: NaN and negatives give 0, absurdly large values u64::MAX.
        buckets.sum_nanos.fetch_add((seconds * 1e9) as u64, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.0.counts.iter().map(|count| count.load(Ordering::Relaxed)).sum()
    }

    /// Sum of the observations so far, in seconds.
    pub fn sum(&self) -> f64 {
        self.0.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }
}

impl EncodeMetric for Histogram {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        let buckets = &*self.0;
        let upper_bounds = buckets.bounds.iter().copied().chain([f64::INFINITY]);
        let counts: Vec<(f64, u64)> = upper_bounds
            .zip(buckets.counts.iter().map(|count| count.load(Ordering::Relaxed)))
            .collect();
        // The count is the buckets' own total, so `_count` always equals the `+Inf` bucket.
        let count = counts.iter().map(|(_, count)| count).sum();
        encoder.encode_histogram::<NoLabelSet>(self.sum(), count, &counts, None)
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
}
