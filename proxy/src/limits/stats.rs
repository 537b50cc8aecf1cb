//! The limits' metrics: one set for the process, as the limiters are.

use std::sync::LazyLock;

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use super::LimitKind;
use crate::metrics::gauge_value;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

pub(super) struct LimitStats {
    limited: Family<LimitLabels, Counter>,
    states: Gauge,
    evicted: Counter,
}

pub(super) static STATS: LazyLock<LimitStats> = LazyLock::new(|| LimitStats {
    limited: Family::default(),
    states: Gauge::default(),
    evicted: Counter::default(),
});

/// Adds the limits' series to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(
        "shunt_requests_limited",
        "Requests refused by a route's rate (limit=rate) or requests-in-progress limit (limit=connections)",
        STATS.limited.clone(),
    );
    registry.register(
        "shunt_limit_states",
        "Caller addresses the rate limits keep a state for, all zones",
        STATS.states.clone(),
    );
    registry.register(
        "shunt_limit_states_evicted",
        "Caller states dropped to keep a zone within its cap",
        STATS.evicted.clone(),
    );
}

impl LimitStats {
    pub fn limited(&self, kind: LimitKind) {
        let limit = match kind {
            LimitKind::Rate => "rate",
            LimitKind::Connections => "connections",
        };
        self.limited.get_or_create(&LimitLabels { limit }).inc();
    }

    /// One state added after `evicted` were dropped.
    pub fn states_added(&self, evicted: usize) {
        self.states.inc_by(1 - gauge_value(evicted));
        self.evicted.inc_by(evicted as u64);
    }

    pub fn states_dropped(&self, count: usize) {
        self.states.dec_by(gauge_value(count));
    }
}
