//! Where this proxy runs (`--node-name`, `--zone`); the proxy prefers endpoints whose
//! EndpointSlice hints ([`crate::EndpointTopology`]) name its node, else its zone.

use std::fmt;

/// This proxy's place in the cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    pub node: Option<String>,
    pub zone: Option<String>,
}

/// Where an endpoint is, seen from this proxy (the `locality` label of the request counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Locality {
    SameNode,
    SameZone,
    Other,
}

// === impl Locality ===

impl Locality {
    pub const ALL: [Locality; 3] = [Locality::SameNode, Locality::SameZone, Locality::Other];

    pub const fn as_str(self) -> &'static str {
        match self {
            Locality::SameNode => "same_node",
            Locality::SameZone => "same_zone",
            Locality::Other => "other",
        }
    }
}

impl fmt::Display for Locality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
