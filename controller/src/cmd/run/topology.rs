//! This proxy's place for the topology-aware choice: `--node-name` and `--zone`, or the zone
//! label of its own Node when `--zone` is unset (needs `get` on nodes).

use k8s_openapi::api::core::v1::Node;
use kube::{Api, Client};
use shunt_spec::Topology;
use tracing::{info, warn};

/// How long start-up waits for the Node before serving without its zone.
const NODE_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The label the cloud provider sets on every Node.
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// The flags' topology, its zone read from the Node when only the node is known. Fails open: a
/// Node that cannot be read leaves the zone unknown (same-node hints still work).
pub async fn resolve(client: &Client, mut topology: Topology) -> Topology {
    let (Some(node), None) = (topology.node.clone(), topology.zone.as_ref()) else {
        return topology;
    };
    // Bounded: serving must not wait on an API server that does not answer.
    let read = tokio::time::timeout(NODE_READ_TIMEOUT, Api::<Node>::all(client.clone()).get(&node)).await;
    match read.unwrap_or_else(|_| Err(kube::Error::Service("timed out reading the Node".into()))) {
        Ok(found) => {
            topology.zone = found.metadata.labels.and_then(|mut labels| labels.remove(ZONE_LABEL));
            info!(node, zone = ?topology.zone, "Read this proxy's zone from its Node");
        }
        Err(error) => warn!(%error, node, "Failed to read this proxy's Node; zone hints are not followed"),
    }
    topology
}
