//! The only writes to Ingress objects: `status.loadBalancer.ingress` (PUT to `/status`), by the leader, for
//! Ingresses of our own classes (never shadow or foreign ones), and only when it differs. An
//! Ingress that leaves our class loses the address we wrote, and nothing else.

use crate::objects::{ApiIngress, Ingress};
use std::{
    collections::{HashMap, HashSet},
    net::IpAddr,
    sync::Arc,
};

use k8s_openapi::api::{core::v1::Service, networking::v1::IngressLoadBalancerIngress};
use kube::{Api, Client, api::PostParams};
use tracing::{debug, info, warn};

use crate::compile::ServedIngress;

/// Where the address written into status comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublishAddress {
    /// The ClusterIP of this Service (`--publish-service`).
    ServiceIp { namespace: String, name: String },
    /// The Service's DNS name, `NAME.NAMESPACE.svc.<--cluster-domain>` (`--publish-service`
    /// with `--publish-hostname`).
    ServiceHostname { hostname: String },
    /// Fixed addresses or hostnames (`--publish-status-address`).
    Fixed(Vec<String>),
}

impl PublishAddress {
    /// The addresses and hostnames to publish, resolved now (a Service's ClusterIP may change).
    pub async fn resolve(&self, client: &Client) -> kube::Result<Vec<String>> {
        Ok(match self {
            PublishAddress::Fixed(addresses) => addresses.clone(),
            PublishAddress::ServiceHostname { hostname } => vec![hostname.clone()],
            PublishAddress::ServiceIp { namespace, name } => {
                let service = Api::<Service>::namespaced(client.clone(), namespace).get(name).await?;
                let spec = service.spec.unwrap_or_default();
                let ips = spec.cluster_ips.unwrap_or_default();
                let ips = if ips.is_empty() {
                    spec.cluster_ip.into_iter().collect()
                } else {
                    ips
                };
                ips.into_iter().filter(|ip| !ip.is_empty() && ip != "None").collect()
            }
        })
    }
}

pub struct StatusWriter {
    client: Client,
    address: PublishAddress,
    /// Our last successful write per Ingress, keyed by the resourceVersion it was made from.
    /// Until the watch delivers the written object, the store still holds that version, and
    /// writing from it again would only earn a 409.
    in_flight: HashMap<(String, String), (String, Vec<IngressLoadBalancerIngress>)>,
}

/// What one sync did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub written: usize,
    pub cleared: usize,
    pub failed: usize,
}

impl StatusWriter {
    pub fn new(client: Client, address: PublishAddress) -> Self {
        StatusWriter {
            client,
            address,
            in_flight: HashMap::new(),
        }
    }

    /// The status entries we publish, resolved now (a Service's ClusterIP may change).
    async fn desired(&self) -> kube::Result<Vec<IngressLoadBalancerIngress>> {
        let addresses = self.address.resolve(&self.client).await?;
        Ok(addresses.iter().map(|address| entry(address)).collect())
    }

    /// Brings every Ingress's status in line with what we serve.
    pub async fn sync(
        &mut self,
        ingresses: impl Iterator<Item = Arc<Ingress>>,
        served: &[ServedIngress],
    ) -> SyncReport {
        let mut report = SyncReport::default();
        let desired = match self.desired().await {
            Ok(desired) => desired,
            Err(error) => {
                warn!(%error, address = ?self.address, "Cannot resolve the status address, status left as is");
                report.failed += 1;
                return report;
            }
        };
        // Not sized from the last sync's: after a sync that wrote every Ingress, the next one
        // keeps almost none, and a map sized for 10k entries would stay.
        let mut seen = HashMap::new();
        // One set per sync: a scan of `served` per Ingress is quadratic at 10k Ingresses.
        let owned: HashSet<(&str, &str)> = (served.iter())
            .filter(|served| !served.shadow)
            .map(|served| (served.namespace.as_str(), served.name.as_str()))
            .collect();
        for ingress in ingresses {
            let namespace = ingress.metadata.namespace.clone().unwrap_or_default();
            let name = ingress.metadata.name.clone().unwrap_or_default();
            let key = (namespace.clone(), name.clone());
            let read_version = ingress.metadata.resource_version.clone().unwrap_or_default();
            if let Some((version, written)) = self.in_flight.remove(&key)
                && version == read_version
            {
                seen.insert(key.clone(), (version, written));
            }
            let ours = owned.contains(&(namespace.as_str(), name.as_str()));
            let Some(next) = plan(&ingress, ours, &desired) else {
                continue;
            };
            if seen.get(&key).is_some_and(|(_, written)| *written == next) {
                continue;
            }
            match self.write(&ingress, &next).await {
                Ok(_) if next.is_empty() => {
                    info!(ingress = %format!("{namespace}/{name}"), "Cleared status of an Ingress we no longer serve");
                    report.cleared += 1;
                    seen.insert(key, (read_version, next));
                }
                Ok(_) => {
                    debug!(ingress = %format!("{namespace}/{name}"), "Wrote status");
                    report.written += 1;
                    seen.insert(key, (read_version, next));
                }
                Err(error) => {
                    warn!(%error, ingress = %format!("{namespace}/{name}"), "Status write failed");
                    report.failed += 1;
                }
            }
        }
        self.in_flight = seen;
        report
    }

    /// Replaces `ingress`'s load-balancer status with `next` (none when empty). The replace
    /// carries the resourceVersion we read: a concurrent change makes it fail (409) instead of
    /// being overwritten, and the next sync retries from fresh state.
    ///
    /// Sent and answered as [`ApiIngress`]: the answer, which nothing reads, is decoded without
    /// its managedFields, as the watch decodes the same object a moment later.
    async fn write(&self, ingress: &Ingress, next: &[IngressLoadBalancerIngress]) -> kube::Result<ApiIngress> {
        let (namespace, name) = (ingress.metadata.namespace.as_deref(), ingress.metadata.name.as_deref());
        let api = Api::<ApiIngress>::namespaced(self.client.clone(), namespace.unwrap_or_default());
        let mut updated = ApiIngress::from(ingress.clone());
        let status = updated.status.get_or_insert_with(Default::default);
        status.load_balancer.get_or_insert_with(Default::default).ingress =
            if next.is_empty() { None } else { Some(next.to_vec()) };
        api.replace_status(name.unwrap_or_default(), &PostParams::default(), &updated)
            .await
    }
}

/// What to write into one Ingress's status, or `None` to leave it alone. Pure, for tests.
pub fn plan(
    ingress: &Ingress,
    owned: bool,
    desired: &[IngressLoadBalancerIngress],
) -> Option<Vec<IngressLoadBalancerIngress>> {
    let current = ingress
        .status
        .as_ref()
        .and_then(|status| status.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.clone())
        .unwrap_or_default();
    if owned {
        (current != desired).then(|| desired.to_vec())
    } else {
        // Someone else's (or a shadowed CLB's) status: clear only what is exactly ours.
        (!current.is_empty() && current == desired).then(Vec::new)
    }
}

fn entry(address: &str) -> IngressLoadBalancerIngress {
    if address.parse::<IpAddr>().is_ok() {
        IngressLoadBalancerIngress {
            ip: Some(address.to_string()),
            ..Default::default()
        }
    } else {
        IngressLoadBalancerIngress {
            hostname: Some(address.to_string()),
            ..Default::default()
        }
    }
}
pub mod gateway;
#[cfg(test)]
mod tests;
