//! Where this proxy runs (`--node-name`, `--zone`); the proxy prefers endpoints whose
//! EndpointSlice hints ([`crate::EndpointTopology`]) name its node, else its zone.

/// This proxy's place in the cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    pub node: Option<String>,
    pub zone: Option<String>,
}
