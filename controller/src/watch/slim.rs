//! Drops what shunt never reads before an object enters its reflector store: the API server's
//! bookkeeping (`managedFields`, kubectl's last-applied copy) and fields compile ignores. At
//! 10,000 objects these copies are most of a store's memory.
//!
//! Each field dropped here is one compile never reads; `slim/tests.rs` compiles generated objects
//! in full and slimmed and compares the results, so a compile change that starts reading a
//! dropped field fails there.

use k8s_openapi::{
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::IngressClass,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::core::PartialObjectMeta;
use shunt_spec::{MAX_AUTH_SET_HEADERS, MAX_AUTH_SET_HEADERS_BYTES};

use std::collections::BTreeMap;

use crate::{
    dns::services::HOSTNAME_ANNOTATION,
    objects::{ApiEndpointSlice, ApiIngress, ApiService, EndpointSlice, LAST_APPLIED, Service},
};

/// Keys of a Secret that compile reads: TKE's `qcloud_cert_id` too, as the qcloud profile tells a
/// Secret TKE can use (E4011) from one it cannot, and `ca.crt` and `ca.crl`, which
/// ingress-nginx's `proxy-ssl-secret` reads (a CRL refuses the host, so it must not vanish here).
const TLS_KEYS: [&str; 5] = ["tls.crt", "tls.key", "qcloud_cert_id", "ca.crt", "ca.crl"];

/// Removes what no reader of the stores uses; everything compile, status and Events read stays.
pub trait Slim {
    fn slim(&mut self);
}

/// What no reader uses on any kind. Name, namespace, resourceVersion (the watcher resumes from
/// it, the status writer sends it) and creationTimestamp (compile's precedence) stay.
pub(super) fn slim_metadata(metadata: &mut ObjectMeta) {
    metadata.managed_fields = None;
    metadata.owner_references = None;
    metadata.finalizers = None;
    metadata.generate_name = None;
    metadata.self_link = None;
    metadata.labels = None;
    if let Some(annotations) = &mut metadata.annotations {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            metadata.annotations = None;
        }
    }
}

/// For kinds whose annotations and identity nothing reads (Events name Ingresses only).
pub(super) fn slim_metadata_fully(metadata: &mut ObjectMeta) {
    slim_metadata(metadata);
    metadata.annotations = None;
    metadata.uid = None;
}

impl Slim for ApiIngress {
    /// As decoded, before it is stored as an [`crate::objects::Ingress`]. Annotations stay
    /// (compile reads shunt's, ingress-nginx's and TKE's), so do the uid (Events refer to it) and
    /// `status` (the status writer compares it before writing).
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for IngressClass {
    /// Annotations stay: `is-default-class` is one.
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for ApiService {
    /// As decoded, before it is stored as a [`Service`]: its annotations stay for that step.
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for ApiEndpointSlice {
    /// As decoded, before it is stored as an [`EndpointSlice`]: its labels stay for that step
    /// (one names its Service).
    fn slim(&mut self) {
        let labels = self.metadata.labels.take();
        slim_metadata_fully(&mut self.metadata);
        self.metadata.labels = labels;
    }
}

impl Slim for Service {
    /// Our compact type already holds only the type, ports, namespace and name, and annotations
    /// but a LoadBalancer's external-dns hostname (`--dns-loadbalancer-services`) go.
    fn slim(&mut self) {
        let load_balancer = self.spec.as_ref().and_then(|spec| spec.type_.as_deref()) == Some("LoadBalancer");
        let hostname = (self.metadata.annotations.take())
            .and_then(|annotations| annotations.get(HOSTNAME_ANNOTATION).cloned())
            .filter(|_| load_balancer);
        self.metadata.annotations =
            hostname.map(|hostname| Box::new([(HOSTNAME_ANNOTATION.to_string(), hostname)].into()));
    }
}

impl Slim for EndpointSlice {
    /// Our compact type already holds only what compile reads but annotations (its Service's
    /// name is a field of its own).
    fn slim(&mut self) {
        self.metadata.annotations = None;
    }
}

/// A watched object as its store keeps it: converted to the stored form (exact capacities: serde
/// grows vectors by doubling) and slimmed.
pub(super) fn stored<W: Clone + Into<S>, S: Slim>(watched: &W) -> S {
    let mut object: S = watched.clone().into();
    object.slim();
    object
}

impl Slim for ConfigMap {
    /// Only `data`: the nginx profile reads its keys.
    fn slim(&mut self) {
        slim_metadata_fully(&mut self.metadata);
        self.binary_data = None;
    }
}

/// Marks a ConfigMap whose data [`bound_auth_config_map`] dropped.
pub const DATA_DROPPED: &str = "shunt.dev/data-dropped";

/// A ConfigMap `auth-proxy-set-headers` may name: its data kept while within what such a
/// ConfigMap may hold, else dropped and marked, so a cluster's large ConfigMaps cost nothing.
pub fn bound_auth_config_map(map: &mut ConfigMap) {
    map.slim();
    let data = map.data.as_ref();
    let bytes: usize = data.map_or(0, |d| d.iter().map(|(k, v)| k.len() + v.len()).sum());
    let entries = data.map_or(0, BTreeMap::len);
    if bytes > MAX_AUTH_SET_HEADERS_BYTES || entries > MAX_AUTH_SET_HEADERS {
        map.data = None;
        map.metadata.annotations = Some([(DATA_DROPPED.to_string(), "true".to_string())].into());
    }
}

impl Slim for Secret {
    /// Only the type and the keys compile reads ([`TLS_KEYS`]); a Secret with none of them is
    /// kept as its name (it exists, which `proxy-ssl-secret` tells from a missing one).
    fn slim(&mut self) {
        slim_metadata_fully(&mut self.metadata);
        self.immutable = None;
        if let Some(data) = &mut self.data {
            data.retain(|key, _| TLS_KEYS.contains(&key.as_str()));
        }
        if let Some(data) = &mut self.string_data {
            data.retain(|key, _| TLS_KEYS.contains(&key.as_str()));
        }
    }
}

impl Slim for PartialObjectMeta<Secret> {
    /// Its namespace and name: whether it exists (the watch never carries a Secret's data).
    fn slim(&mut self) {
        self.types = None;
        slim_metadata_fully(&mut self.metadata);
    }
}

#[cfg(test)]
mod tests;
