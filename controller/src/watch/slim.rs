//! Drops what shunt never reads before an object enters its reflector store: the API server's
//! bookkeeping (`managedFields`, kubectl's last-applied copy) and fields compile ignores. At
//! 10,000 objects these copies are most of a store's memory.

use k8s_openapi::{
    api::{
        core::v1::{Secret, Service, ServiceSpec},
        discovery::v1::EndpointSlice,
        networking::v1::{Ingress, IngressClass},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

/// The annotation `kubectl apply` keeps a whole copy of the object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Keys of a `kubernetes.io/tls` Secret that compile reads.
const TLS_KEYS: [&str; 2] = ["tls.crt", "tls.key"];

/// Removes what no reader of the stores uses; everything compile, status and Events read stays.
pub trait Slim {
    fn slim(&mut self);
}

fn slim_metadata(metadata: &mut ObjectMeta) {
    metadata.managed_fields = None;
    metadata.owner_references = None;
    if let Some(annotations) = &mut metadata.annotations {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            metadata.annotations = None;
        }
    }
}

impl Slim for Ingress {
    /// `status` stays: the status writer compares it before writing.
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for IngressClass {
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for Service {
    /// Compile reads the type and the ports; selectors, IPs, policies and status go.
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
        self.status = None;
        if let Some(spec) = self.spec.take() {
            self.spec = Some(ServiceSpec {
                type_: spec.type_,
                ports: spec.ports,
                external_name: spec.external_name,
                ..ServiceSpec::default()
            });
        }
    }
}

impl Slim for EndpointSlice {
    /// Compile reads addresses, conditions and ports; pod references and topology go.
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
        for endpoint in &mut self.endpoints {
            endpoint.target_ref = None;
            endpoint.node_name = None;
            endpoint.zone = None;
            endpoint.hints = None;
            endpoint.deprecated_topology = None;
            endpoint.hostname = None;
        }
    }
}

impl Slim for Secret {
    /// Only the certificate and its key; a CA bundle or other keys go.
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
        if let Some(data) = &mut self.data {
            data.retain(|key, _| TLS_KEYS.contains(&key.as_str()));
        }
        if let Some(data) = &mut self.string_data {
            data.retain(|key, _| TLS_KEYS.contains(&key.as_str()));
        }
    }
}

#[cfg(test)]
mod tests;
