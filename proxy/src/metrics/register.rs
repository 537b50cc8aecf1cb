//! Making a metric and registering it in one step, so each series is named once, next to the
//! field that keeps its handle (the data plane, connection and control-plane metrics share it).

use prometheus_client::registry::{Metric, Registry};

/// Registers `metric` under `name` and hands it back for the caller to keep.
pub fn register<M: Metric + Clone>(registry: &mut Registry, name: &str, help: &str, metric: M) -> M {
    registry.register(name, help, metric.clone());
    metric
}

/// A count as a gauge value; counts past `i64::MAX` (never in practice) stick there.
pub fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}
