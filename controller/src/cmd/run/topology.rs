//! This proxy's place for the topology-aware choice: `--node-name` and `--zone`, or the zone
//! label of its own Node when `--zone` is unset (needs `get` on nodes).

use k8s_openapi::api::core::v1::Node;
use kube::{Api, Client};
use shunt_proxy::upstream::Topology;
use tracing::{info, warn};

/// The label the cloud provider sets on every Node.
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// The flags' topology, its zone read from the Node when only the node is known. Fails open: a
/// Node that cannot be read leaves the zone unknown (same-node hints still work).
pub async fn resolve(client: &Client, mut topology: Topology) -> Topology {
    let (Some(node), None) = (topology.node.clone(), topology.zone.as_ref()) else {
        return topology;
    };
    match Api::<Node>::all(client.clone()).get(&node).await {
        Ok(found) => {
            topology.zone = found.metadata.labels.and_then(|mut labels| labels.remove(ZONE_LABEL));
            info!(node, zone = ?topology.zone, "Read this proxy's zone from its Node");
        }
        Err(error) => warn!(%error, node, "Failed to read this proxy's Node; zone hints are not followed"),
    }
    topology
}
