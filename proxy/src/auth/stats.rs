//! `shunt_external_auth_total{outcome}`: one set for the process, as the limits' is.

use std::sync::LazyLock;

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family},
    registry::Registry,
};

/// How one auth request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthOutcome {
    /// 2xx: the request went on.
    Allowed,
    /// 401 (answered, or redirected to the sign-in page).
    Unauthorized,
    Forbidden,
    /// Another status: 500.
    Unexpected,
    /// No connection, no answer in time, a broken answer: 500.
    Failed,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

pub struct AuthStats {
    total: Family<OutcomeLabels, Counter>,
}

pub(crate) static STATS: LazyLock<AuthStats> = LazyLock::new(|| AuthStats {
    total: Family::default(),
});

/// Adds the series to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(
        "shunt_external_auth",
        "Requests to external auth services (auth-url), by outcome: allowed, unauthorized, forbidden, unexpected (another status), failed (no answer)",
        STATS.total.clone(),
    );
    registry.register(
        "shunt_external_auth_cache",
        "Auth cache (auth-cache-key) events: hit, miss, store, eviction (the oldest answer dropped at the cap)",
        CACHE_STATS.clone(),
    );
}

impl AuthStats {
    pub fn record(&self, outcome: AuthOutcome) {
        let outcome = match outcome {
            AuthOutcome::Allowed => "allowed",
            AuthOutcome::Unauthorized => "unauthorized",
            AuthOutcome::Forbidden => "forbidden",
            AuthOutcome::Unexpected => "unexpected",
            AuthOutcome::Failed => "failed",
        };
        self.total.get_or_create(&OutcomeLabels { outcome }).inc();
    }
}

/// What happened to one look-up or answer in the auth cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheEvent {
    Hit,
    Miss,
    Store,
    Eviction,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EventLabels {
    event: &'static str,
}

static CACHE_STATS: LazyLock<Family<EventLabels, Counter>> = LazyLock::new(Family::default);

impl AuthStats {
    pub fn cache(&self, event: CacheEvent) {
        let event = match event {
            CacheEvent::Hit => "hit",
            CacheEvent::Miss => "miss",
            CacheEvent::Store => "store",
            CacheEvent::Eviction => "eviction",
        };
        CACHE_STATS.get_or_create(&EventLabels { event }).inc();
    }
}
