//! Keeps this release's block in node-local-dns's Corefile (leader, `--manage-coredns`): get and
//! update of that one ConfigMap, with the resourceVersion read, redone from a fresh read after a
//! conflict; never created. When it exists and shunt cannot (or may not) edit it, says so once: a
//! log line, a Warning Event on the ConfigMap and `shunt_dns_node_local_unmanaged`. Tested with
//! the zone list in `../nodelocal/tests.rs`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client, api::PostParams};
use tracing::{info, warn};

use super::replace;
use crate::dns::{
    event::warn_on_configmap,
    metrics::{DnsMetrics, flag},
    release::Release,
};

const COREFILE_KEY: &str = "Corefile";
/// Conflicts are redone from a fresh read this many times, waiting a little longer each time, so
/// a burst of another writer's updates (an operator's script, a node-cache rollout) is outlasted.
const ATTEMPTS: u32 = 5;
const BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// What one sync found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeLocal {
    /// No such ConfigMap: no node-local-dns, nothing to do.
    Absent,
    /// The block is in place (`wrote`: this sync changed it).
    Managed { wrote: bool },
    /// It exists and the block is not in it, with why.
    NotManaged(String),
    /// A failure worth retrying (API down, a Corefile shunt cannot edit), with why.
    Failed(String),
}

pub struct NodeLocalWriter {
    client: Client,
    api: Api<ConfigMap>,
    namespace: String,
    name: String,
    /// `--manage-node-local-dns`: false leaves the Corefile alone (and reports it).
    manage: bool,
    metrics: DnsMetrics,
    /// The last state reported, so each is reported once until it changes.
    reported: Option<NodeLocal>,
}

impl NodeLocalWriter {
    pub fn new(client: Client, (namespace, name): (String, String), manage: bool, metrics: DnsMetrics) -> Self {
        NodeLocalWriter {
            api: Api::namespaced(client.clone(), &namespace),
            client,
            namespace,
            name,
            manage,
            metrics,
            reported: None,
        }
    }

    /// Brings the block in line with `zones`, then reports the outcome if it changed.
    pub async fn sync(&mut self, release: &Release, zones: &[String]) -> NodeLocal {
        let mut attempt = 1;
        let state = loop {
            match self.sync_once(release, zones).await {
                Err(kube::Error::Api(status)) if status.code == 409 && attempt < ATTEMPTS => {
                    tokio::time::sleep(BACKOFF * attempt).await;
                    attempt += 1;
                }
                Err(kube::Error::Api(status)) if status.code == 403 => {
                    break NodeLocal::NotManaged(format!("the update was forbidden: {}", status.message));
                }
                Err(error) => break NodeLocal::Failed(error.to_string()),
                Ok(state) => break state,
            }
        };
        self.report(&state).await;
        state
    }

    async fn sync_once(&self, release: &Release, zones: &[String]) -> kube::Result<NodeLocal> {
        let mut config_map = match self.api.get_opt(&self.name).await {
            Ok(Some(config_map)) => config_map,
            Ok(None) => return Ok(NodeLocal::Absent),
            // Without the get, shunt cannot tell whether node-local-dns runs.
            Err(kube::Error::Api(status)) if status.code == 403 => {
                return Ok(NodeLocal::Failed(format!(
                    "cannot read it ({}); if node-local-dns runs, grant get and update on it",
                    status.message
                )));
            }
            Err(error) => return Err(error),
        };
        if !self.manage {
            return Ok(NodeLocal::NotManaged("--manage-node-local-dns is false".to_string()));
        }
        let data = config_map.data.get_or_insert_with(BTreeMap::new);
        let Some(current) = data.get(COREFILE_KEY) else {
            return Ok(NodeLocal::Failed(format!("it has no key {COREFILE_KEY}")));
        };
        let edited = match replace(current, release, zones) {
            Ok(edited) => edited,
            Err(error) => return Ok(NodeLocal::Failed(error.to_string())),
        };
        if *current == edited {
            return Ok(NodeLocal::Managed { wrote: false });
        }
        data.insert(COREFILE_KEY.to_string(), edited);
        self.api
            .replace(&self.name, &PostParams::default(), &config_map)
            .await?;
        info!(configmap = %self.qualified(), zones = zones.len(), "Updated node-local-dns zones");
        Ok(NodeLocal::Managed { wrote: true })
    }

    fn qualified(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    async fn report(&mut self, state: &NodeLocal) {
        flag(
            &self.metrics.node_local_unmanaged,
            matches!(state, NodeLocal::NotManaged(_)),
        );
        // A write is news each time; the states are reported when they change.
        let settled = match state {
            NodeLocal::Managed { .. } => NodeLocal::Managed { wrote: false },
            other => other.clone(),
        };
        if self.reported.as_ref() == Some(&settled) {
            return;
        }
        let configmap = self.qualified();
        match state {
            NodeLocal::Absent | NodeLocal::Managed { .. } => {}
            NodeLocal::Failed(why) => {
                warn!(%configmap, %why, "node-local-dns zones not updated; retrying on the next change");
            }
            NodeLocal::NotManaged(why) => {
                warn!(%configmap, %why, "node-local-dns runs without shunt's block: its pods resolve served hosts past shunt");
                let note = format!(
                    "node-local-dns sends the hosts shunt serves straight upstream, past the CoreDNS rules ({why}); \
                     add the block `shunt dns --node-local-dns` prints, or let shunt manage it"
                );
                let at = (self.namespace.as_str(), self.name.as_str());
                warn_on_configmap(&self.client, at, "NodeLocalDnsNotManaged", note).await;
            }
        }
        self.reported = Some(settled);
    }
}
