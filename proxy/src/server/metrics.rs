//! Connection-level metrics: open connections and tunnels, refusals, accept errors, and why
//! connections were closed. Registered by the controller next to the proxy's request metrics.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use crate::metrics::register;

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
        ServerMetrics {
            open_connections: register(
                registry,
                "shunt_client_connections",
                "Client connections open now, all listeners and workers",
                Gauge::default(),
            ),
            rejected_connections: register(
                registry,
                "shunt_client_connections_rejected",
                "Client connections closed at accept because --max-connections were open",
                Counter::default(),
            ),
            accept_errors: register(
                registry,
                "shunt_accept_errors",
                "Failed accepts (e.g. EMFILE), each followed by a short back-off",
                Counter::default(),
            ),
            open_tunnels: register(
                registry,
                "shunt_tunnels",
                "Upgraded connections (WebSocket and others) open now",
                Gauge::default(),
            ),
            closed: register(
                registry,
                "shunt_client_connections_closed",
                "Client connections and tunnels shunt closed, by reason",
                Family::default(),
            ),
        }
    }

    pub fn closed(&self, reason: CloseReason) {
        self.closed
            .get_or_create(&ReasonLabels {
                reason: reason.as_str(),
            })
            .inc();
    }
}
