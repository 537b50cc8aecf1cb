//! Topology: where this proxy runs (node, zone), and from that which endpoints its choice
//! prefers (EndpointSlice hints: `forNodes` before `forZones`) and where each endpoint is (the
//! hints name its own node and zone).

use std::{collections::BTreeMap, net::SocketAddr};

use crate::spec::{EndpointTopology, Locality, Topology};

/// The indexes of `endpoints` to prefer and each one's locality. Preferred: those whose
/// `forNodes` hint names this node; if none, those whose `forZones` names this zone; if none,
/// no preference (every endpoint alike).
pub fn classify(
    us: &Topology,
    endpoints: &[SocketAddr],
    topology: &BTreeMap<SocketAddr, EndpointTopology>,
) -> (Vec<usize>, Vec<Locality>) {
    if topology.is_empty() || (us.node.is_none() && us.zone.is_none()) {
        return (Vec::new(), Vec::new());
    }
    let of = |addr: &SocketAddr| topology.get(addr);
    let hinted = |names: fn(&EndpointTopology) -> &[String], ours: &Option<String>| -> Vec<usize> {
        let Some(ours) = ours else { return Vec::new() };
        (0..endpoints.len())
            .filter(|&i| of(&endpoints[i]).is_some_and(|t| names(t).iter().any(|name| name == ours)))
            .collect()
    };
    let mut preferred = hinted(|t| &t.for_nodes, &us.node);
    if preferred.is_empty() {
        preferred = hinted(|t| &t.for_zones, &us.zone);
    }
    // The hints name the endpoint's own node and zone (the EndpointSlice controller's rule).
    let names = |names: &[String], ours: &Option<String>| ours.as_ref().is_some_and(|o| names.contains(o));
    let locality = endpoints
        .iter()
        .map(|addr| match of(addr) {
            Some(t) if names(&t.for_nodes, &us.node) => Locality::SameNode,
            Some(t) if names(&t.for_zones, &us.zone) => Locality::SameZone,
            _ => Locality::Other,
        })
        .collect();
    (preferred, locality)
}

#[cfg(test)]
mod tests;
