//! Connection-level metrics: open connections and tunnels, refusals, accept errors, and why
//! connections were closed. Registered by the controller next to the proxy's request metrics.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

/// Why shunt closed a client connection itself.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum CloseReason {
    /// No complete request head within `--client-header-timeout`.
    HeaderTimeout,
    /// Nothing in flight for `--client-idle-timeout`.
    IdleTimeout,
    /// The TLS handshake did not finish in time.
    HandshakeTimeout,
    /// An upgraded tunnel saw no bytes for `--tunnel-idle-timeout`.
    TunnelIdle,
    /// An upgraded tunnel still open at the drain deadline.
    TunnelDrain,
}

impl CloseReason {
    /// The `reason` label.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::HeaderTimeout => "header_timeout",
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::HandshakeTimeout => "handshake_timeout",
            CloseReason::TunnelIdle => "tunnel_idle",
            CloseReason::TunnelDrain => "tunnel_drain",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

/// Cheap to clone; every clone updates the same series.
#[derive(Clone, Debug, Default)]
pub struct ServerMetrics {
    pub open_connections: Gauge,
    pub rejected_connections: Counter,
    pub accept_errors: Counter,
    pub open_tunnels: Gauge,
    closed: Family<ReasonLabels, Counter>,
}

// === impl ServerMetrics ===

impl ServerMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = ServerMetrics::default();
        registry.register(
            "shunt_client_connections",
            "Client connections open now, all listeners and workers",
            metrics.open_connections.clone(),
        );
        registry.register(
            "shunt_client_connections_rejected",
            "Client connections closed at accept because --max-connections were open",
            metrics.rejected_connections.clone(),
        );
        registry.register(
            "shunt_accept_errors",
            "Failed accepts (e.g. EMFILE), each followed by a short back-off",
            metrics.accept_errors.clone(),
        );
        registry.register(
            "shunt_tunnels",
            "Upgraded connections (WebSocket and others) open now",
            metrics.open_tunnels.clone(),
        );
        registry.register(
            "shunt_client_connections_closed",
            "Client connections and tunnels shunt closed, by reason",
            metrics.closed.clone(),
        );
        metrics
    }

    pub fn closed(&self, reason: CloseReason) {
        self.closed
            .get_or_create(&ReasonLabels {
                reason: reason.as_str(),
            })
            .inc();
    }
}
