//! The leader's writes to Gateway API status: GatewayClass, Gateway, HTTPRoute and GRPCRoute, through
//! their `status` subresource, as a JSON merge patch conditional on the resourceVersion the
//! compile read (a concurrent change earns a 409 and the next compile retries), and only where
//! `plan` finds a difference.

use std::collections::HashMap;

use futures::StreamExt;
use kube::{
    Api, Client,
    api::{Patch as KubePatch, PatchParams},
};
use serde_json::json;
use tracing::{debug, warn};

pub use self::plan::{Kind, Objects, Patch, SUPPORTED_FEATURES, plan};
use super::{PublishAddress, SyncReport, WRITES_AT_ONCE};
use crate::sources::gateway::{
    GatewayStatus,
    grpc::objects::GRPCRoute,
    objects::{Gateway, GatewayClass, HTTPRoute},
};

mod plan;
#[cfg(test)]
mod tests;

pub struct GatewayStatusWriter {
    client: Client,
    /// Where Gateways' `addresses` come from; none written without one.
    address: Option<PublishAddress>,
    /// The resourceVersion each of our last writes was made from: until the watch delivers the
    /// written object the compile still reads that version, and a write from it would only earn
    /// a 409 (the delivered object brings a compile, which writes if still needed).
    in_flight: HashMap<(Kind, Option<String>, String), String>,
}

impl GatewayStatusWriter {
    pub fn new(client: Client, address: Option<PublishAddress>) -> Self {
        GatewayStatusWriter {
            client,
            address,
            in_flight: HashMap::new(),
        }
    }

    /// Brings the status of the objects one compile read in line with what it computed.
    pub async fn sync(&mut self, status: &GatewayStatus, objects: &Objects) -> SyncReport {
        let addresses = match &self.address {
            None => Vec::new(),
            Some(address) => match address.resolve(&self.client).await {
                Ok(addresses) => addresses,
                Err(error) => {
                    warn!(%error, ?address, "Cannot resolve the status address, Gateway status left as is");
                    return SyncReport {
                        failed: 1,
                        ..SyncReport::default()
                    };
                }
            },
        };
        let now = k8s_openapi::jiff::Timestamp::now().round(k8s_openapi::jiff::Unit::Second);
        let patches = plan(
            status,
            objects,
            &addresses,
            &now.map(|t| t.to_string()).unwrap_or_default(),
        );
        self.write_all(patches).await
    }

    /// Writes the patches not already in flight, [`WRITES_AT_ONCE`] at a time, as the Ingress
    /// writer does: one at a time, a compile that changes thousands of routes' status waits on
    /// thousands of round trips.
    async fn write_all(&mut self, patches: Vec<Patch>) -> SyncReport {
        let mut report = SyncReport::default();
        let mut seen = HashMap::with_capacity(patches.len());
        let mut to_write = Vec::new();
        for patch in patches {
            let key = (patch.kind, patch.namespace.clone(), patch.name.clone());
            if self.in_flight.get(&key) == Some(&patch.resource_version) {
                seen.insert(key, patch.resource_version);
            } else {
                to_write.push((key, patch));
            }
        }
        {
            let this = &*self;
            let mut written = futures::stream::iter(to_write)
                .map(|(key, patch)| async move { (this.write(&patch).await, key, patch) })
                .buffer_unordered(WRITES_AT_ONCE);
            while let Some((outcome, key, patch)) = written.next().await {
                match outcome {
                    Ok(()) => {
                        debug!(kind = ?patch.kind, namespace = ?patch.namespace, name = %patch.name, "Wrote Gateway API status");
                        report.written += 1;
                        seen.insert(key, patch.resource_version);
                    }
                    Err(error) => {
                        warn!(%error, kind = ?patch.kind, namespace = ?patch.namespace, name = %patch.name, "Gateway API status write failed");
                        report.failed += 1;
                    }
                }
            }
        }
        self.in_flight = seen;
        report
    }

    async fn write(&self, patch: &Patch) -> kube::Result<()> {
        let body = json!({
            "metadata": {"resourceVersion": patch.resource_version},
            "status": patch.status,
        });
        let params = PatchParams::default();
        let namespace = patch.namespace.as_deref().unwrap_or_default();
        let name = patch.name.as_str();
        match patch.kind {
            Kind::GatewayClass => {
                let api = Api::<GatewayClass>::all(self.client.clone());
                api.patch_status(name, &params, &KubePatch::Merge(&body))
                    .await
                    .map(drop)
            }
            Kind::Gateway => {
                let api = Api::<Gateway>::namespaced(self.client.clone(), namespace);
                api.patch_status(name, &params, &KubePatch::Merge(&body))
                    .await
                    .map(drop)
            }
            Kind::HTTPRoute => {
                let api = Api::<HTTPRoute>::namespaced(self.client.clone(), namespace);
                api.patch_status(name, &params, &KubePatch::Merge(&body))
                    .await
                    .map(drop)
            }
            Kind::GRPCRoute => {
                let api = Api::<GRPCRoute>::namespaced(self.client.clone(), namespace);
                api.patch_status(name, &params, &KubePatch::Merge(&body))
                    .await
                    .map(drop)
            }
        }
    }
}
