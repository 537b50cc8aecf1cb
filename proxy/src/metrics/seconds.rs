//! A counter of seconds kept as whole nanoseconds: adding a duration is one `fetch_add`, where
//! prometheus-client's `Counter<f64>` loops on a compare-and-swap.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use prometheus_client::{
    encoding::{EncodeMetric, MetricEncoder, NoLabelSet},
    metrics::{MetricType, TypedMetric},
};

/// Cheap to clone; every clone adds to the same total. Shown in seconds.
#[derive(Clone, Debug, Default)]
pub struct Seconds(Arc<AtomicU64>);

impl Seconds {
    pub fn add(&self, seconds: f64) {
        self.0.fetch_add(super::histogram::nanos(seconds), Ordering::Relaxed);
    }

    pub fn get(&self) -> f64 {
        self.0.load(Ordering::Relaxed) as f64 / 1e9
    }
}

impl EncodeMetric for Seconds {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        encoder.encode_counter::<NoLabelSet, _, u64>(&self.get(), None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }
}

impl TypedMetric for Seconds {
    const TYPE: MetricType = MetricType::Counter;
}
