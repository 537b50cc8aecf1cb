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

/// One listener group's metric names: the proxy's listeners, or the admin listener, whose own
/// budget (apart from the proxy's) must show when probes or scrapes exhaust it.
struct Names {
    connections: &'static str,
    rejected: &'static str,
    accept_errors: &'static str,
    closed: &'static str,
}

impl ServerMetrics {
    /// The proxy's listeners (HTTP and HTTPS, all workers).
    pub fn register(registry: &mut Registry) -> Self {
        let mut metrics = Self::register_named(
            registry,
            &Names {
                connections: "shunt_client_connections",
                rejected: "shunt_client_connections_rejected",
                accept_errors: "shunt_accept_errors",
                closed: "shunt_client_connections_closed",
            },
        );
        metrics.open_tunnels = register(
            registry,
            "shunt_tunnels",
            "Upgraded connections (WebSocket and others) open now",
            Gauge::default(),
        );
        metrics
    }

    /// The admin listener (probes, scrapes, /routes): it upgrades nothing, so no tunnel gauge.
    pub fn register_admin(registry: &mut Registry) -> Self {
        Self::register_named(
            registry,
            &Names {
                connections: "shunt_admin_connections",
                rejected: "shunt_admin_connections_rejected",
                accept_errors: "shunt_admin_accept_errors",
                closed: "shunt_admin_connections_closed",
            },
        )
    }

    fn register_named(registry: &mut Registry, names: &Names) -> Self {
        ServerMetrics {
            open_connections: register(
                registry,
                names.connections,
                "Client connections open now, all listeners and workers",
                Gauge::default(),
            ),
            rejected_connections: register(
                registry,
                names.rejected,
                "Client connections closed at accept because the listener's connection budget was spent",
                Counter::default(),
            ),
            accept_errors: register(
                registry,
                names.accept_errors,
                "Failed accepts (e.g. EMFILE), each followed by a short back-off",
                Counter::default(),
            ),
            open_tunnels: Gauge::default(),
            closed: register(
                registry,
                names.closed,
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
