//! The only writes to Ingress objects: `status.loadBalancer.ingress` (PUT to `/status`), by the leader, for
//! Ingresses of our own classes (never shadow or foreign ones), and only when it differs. An
//! Ingress that leaves our class loses the address we wrote, and nothing else.

use crate::objects::{ApiIngress, Ingress};
use std::{
    collections::{HashMap, HashSet, hash_map::RandomState},
    hash::BuildHasher,
    net::IpAddr,
    sync::Arc,
};

use futures::StreamExt;
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
    /// Our last successful write per Ingress and the resourceVersion it was made from. Until the
    /// watch delivers the written object, the store still holds that version, and writing from
    /// it again would only earn a 409. Kept as keyed fingerprints (16 bytes an entry, not four
    /// strings and the entries: a sync that writes 10,000 Ingresses keeps one per Ingress until
    /// the next sync); the key is random per process, so no tenant can aim a collision.
    in_flight: HashMap<u64, u64>,
    fingerprints: RandomState,
}

/// What one sync did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub written: usize,
    pub cleared: usize,
    pub failed: usize,
}

impl SyncReport {
    fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::InFlight => {}
            Outcome::Written => self.written += 1,
            Outcome::Cleared => self.cleared += 1,
            Outcome::Failed => self.failed += 1,
        }
    }
}

/// Status writes a sync keeps in flight at once: one at a time, 10,000 Ingresses took 20-25 s
/// against a local API server. Few enough that the API server's other clients barely notice.
pub(crate) const WRITES_AT_ONCE: usize = 8;

/// One Ingress's part of a sync; `read` and `written` are [`StatusWriter::in_flight`]'s keys.
enum Step {
    /// Our write from the version the store still holds is in flight: writing again would only
    /// earn a 409.
    InFlight { read: u64, written: u64 },
    Write {
        ingress: Arc<Ingress>,
        next: Vec<IngressLoadBalancerIngress>,
        read: u64,
        written: u64,
    },
}

enum Outcome {
    InFlight,
    Written,
    Cleared,
    Failed,
}

impl StatusWriter {
    pub fn new(client: Client, address: PublishAddress) -> Self {
        StatusWriter {
            client,
            address,
            in_flight: HashMap::new(),
            fingerprints: RandomState::new(),
        }
    }

    /// One Ingress as read at one resourceVersion.
    fn read_key(&self, namespace: &str, name: &str, version: &str) -> u64 {
        self.fingerprints.hash_one((namespace, name, version))
    }

    /// The status entries written: only [`entry`]'s (an address or a hostname), or none.
    fn written_key(&self, entries: &[IngressLoadBalancerIngress]) -> u64 {
        let fields: Vec<_> = entries.iter().map(|entry| (&entry.ip, &entry.hostname)).collect();
        self.fingerprints.hash_one(fields)
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
        // One set per sync: a scan of `served` per Ingress is quadratic at 10k Ingresses.
        let owned: HashSet<(&str, &str)> = (served.iter())
            .filter(|served| !served.shadow)
            .map(|served| (served.namespace.as_str(), served.name.as_str()))
            .collect();
        // Not sized from the last sync's: after a sync that wrote every Ingress, the next one
        // keeps almost none, and a map sized for 10k entries would stay.
        let mut in_flight = HashMap::new();
        {
            let this = &*self;
            let steps = ingresses.filter_map(|ingress| this.step(ingress, &owned, &desired));
            let mut taken = futures::stream::iter(steps)
                .map(|step| this.take(step))
                .buffer_unordered(WRITES_AT_ONCE);
            while let Some((kept, outcome)) = taken.next().await {
                in_flight.extend(kept);
                report.count(outcome);
            }
        }
        self.in_flight = in_flight;
        report
    }

    /// What a sync does for `ingress`: nothing (`None`), keep our write from the version the
    /// store still holds in flight, or write.
    fn step(
        &self,
        ingress: Arc<Ingress>,
        owned: &HashSet<(&str, &str)>,
        desired: &[IngressLoadBalancerIngress],
    ) -> Option<Step> {
        let (namespace, name) = (ingress.metadata.namespace.as_deref(), ingress.metadata.name.as_deref());
        let (namespace, name) = (namespace.unwrap_or_default(), name.unwrap_or_default());
        let read = self.read_key(
            namespace,
            name,
            ingress.metadata.resource_version.as_deref().unwrap_or_default(),
        );
        let next = plan(&ingress, owned.contains(&(namespace, name)), desired)?;
        let written = self.written_key(&next);
        Some(if self.in_flight.get(&read) == Some(&written) {
            Step::InFlight { read, written }
        } else {
            Step::Write {
                ingress,
                next,
                read,
                written,
            }
        })
    }

    /// Takes one step: the write it leaves in flight (read, written), and what it did.
    async fn take(&self, step: Step) -> (Option<(u64, u64)>, Outcome) {
        let (ingress, next, read, written) = match step {
            Step::InFlight { read, written } => return (Some((read, written)), Outcome::InFlight),
            Step::Write {
                ingress,
                next,
                read,
                written,
            } => (ingress, next, read, written),
        };
        let (namespace, name) = (ingress.metadata.namespace.as_deref(), ingress.metadata.name.as_deref());
        let ingress_name = format!("{}/{}", namespace.unwrap_or_default(), name.unwrap_or_default());
        match self.write(&ingress, &next).await {
            Ok(_) if next.is_empty() => {
                info!(ingress = %ingress_name, "Cleared status of an Ingress we no longer serve");
                (Some((read, written)), Outcome::Cleared)
            }
            Ok(_) => {
                debug!(ingress = %ingress_name, "Wrote status");
                (Some((read, written)), Outcome::Written)
            }
            Err(error) => {
                warn!(%error, ingress = %ingress_name, "Status write failed");
                (None, Outcome::Failed)
            }
        }
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
