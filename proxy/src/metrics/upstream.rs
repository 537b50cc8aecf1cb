//! What all backends' requests and connections add up to: the upstream latency, open
//! connections, and how well keep-alive works (dials, opens by protocol, reuses). Global, not
//! per backend or pod, so the series stay few at any table size.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use super::{Histogram, UpstreamStats, register};
use crate::spec::UpstreamProtocol;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProtocolLabels {
    protocol: &'static str,
}

/// Every protocol a pod is spoken to in, in the order of `opened`.
const PROTOCOLS: [UpstreamProtocol; 4] = [
    UpstreamProtocol::Http1,
    UpstreamProtocol::Https,
    UpstreamProtocol::H2c,
    UpstreamProtocol::H2Tls,
];

pub(super) struct UpstreamFamilies {
    latency: Histogram,
    connections: Gauge,
    connects: Counter,
    reuses: Counter,
    /// By `PROTOCOLS` order: an open touches one counter, no label lookup.
    opened: [Counter; 4],
}

impl UpstreamFamilies {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let opened: Family<ProtocolLabels, Counter> = register(
            registry,
            "shunt_upstream_connections_opened",
            "Connections to backend endpoints opened (dialed, and for HTTP/2 handshaken), by the protocol the pod is spoken to in; with shunt_upstream_connection_reuses_total, how well keep-alive works",
            Family::default(),
        );
        UpstreamFamilies {
            latency: register(
                registry,
                "shunt_upstream_response_seconds",
                "Time from sending a request upstream to its response head, all backends",
                Histogram::shared(),
            ),
            connections: register(
                registry,
                "shunt_upstream_connections",
                "Open connections to backend endpoints, all backends",
                Gauge::default(),
            ),
            connects: register(
                registry,
                "shunt_upstream_connects",
                "Connections dialed to backend endpoints, all backends (failed dials included); with shunt_upstream_connection_reuses_total, how well keep-alive works",
                Counter::default(),
            ),
            reuses: register(
                registry,
                "shunt_upstream_connection_reuses",
                "Requests sent on a connection already open (a pooled HTTP/1 one, a shared HTTP/2 one), all backends",
                Counter::default(),
            ),
            opened: PROTOCOLS.map(|protocol| {
                opened.get_or_create_owned(&ProtocolLabels {
                    protocol: protocol.as_str(),
                })
            }),
        }
    }
}

fn protocol_index(protocol: UpstreamProtocol) -> usize {
    match protocol {
        UpstreamProtocol::Http1 => 0,
        UpstreamProtocol::Https => 1,
        UpstreamProtocol::H2c => 2,
        UpstreamProtocol::H2Tls => 3,
        // Opened connections are counted in the protocol chosen for the caller.
        UpstreamProtocol::AutoHttp => 0,
    }
}

// === impl UpstreamStats ===

impl UpstreamStats {
    /// Time from sending a request upstream to its response head.
    pub fn observe_latency(&self, seconds: f64) {
        self.0.families.upstream.latency.observe(seconds);
    }

    /// The gauge of open upstream connections, for a connection about to be dialed (counted
    /// once); the pool holds a clone for each connection's life, so one made before a retire
    /// still counts down after it.
    pub fn connections(&self) -> Gauge {
        self.0.families.upstream.connects.inc();
        self.0.families.upstream.connections.clone()
    }

    /// A connection to a pod in `protocol` is open and about to carry its first request.
    pub fn connection_opened(&self, protocol: UpstreamProtocol) {
        self.0.families.upstream.opened[protocol_index(protocol)].inc();
    }

    /// A request goes out on a connection already open.
    pub fn connection_reused(&self) {
        self.0.families.upstream.reuses.inc();
    }

    /// Connections opened so far in `protocol`, all backends.
    pub fn connections_opened(&self, protocol: UpstreamProtocol) -> u64 {
        self.0.families.upstream.opened[protocol_index(protocol)].get()
    }
}
