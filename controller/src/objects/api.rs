//! Ingresses, Services and EndpointSlices as the watcher decodes them: with k8s-openapi's
//! `ObjectMeta`, which kube's `Resource` requires (the watcher resumes from `resourceVersion`),
//! decoded without what no reader uses (`wire_meta.rs`). They implement k8s-openapi's `Resource`
//! with the API's group, version, kind and plural, so kube's `Api<K>` lists and watches the same
//! URLs; the store keeps each as its compact form ([`Ingress`], [`Service`], [`EndpointSlice`]),
//! converted on arrival.

use k8s_openapi::{
    NamespaceResourceScope,
    api::networking::v1::{self as networking, IngressSpec, IngressStatus},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use serde::{Deserialize, Serialize, Serializer, ser::SerializeStruct};

use super::{
    AddressType, Endpoint, EndpointPort, EndpointSlice, Ingress, Service, ServiceSpec, decode_meta, null_as_default,
    null_as_default_shrunk, resource::resource, shrunk,
};

/// An Ingress as listed (and as the status writer sends it): k8s-openapi's spec and status.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ApiIngress {
    #[serde(default, deserialize_with = "decode_meta")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<IngressSpec>,
    #[serde(default)]
    pub status: Option<IngressStatus>,
}

impl Serialize for ApiIngress {
    /// As k8s-openapi writes an Ingress: with its apiVersion and kind, which a write's body
    /// names.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use k8s_openapi::Resource;
        let mut object = serializer.serialize_struct(Self::KIND, 5)?;
        object.serialize_field("apiVersion", Self::API_VERSION)?;
        object.serialize_field("kind", Self::KIND)?;
        object.serialize_field("metadata", &self.metadata)?;
        if let Some(spec) = &self.spec {
            object.serialize_field("spec", spec)?;
        }
        if let Some(status) = &self.status {
            object.serialize_field("status", status)?;
        }
        object.end()
    }
}

/// A Service as listed: its spec already compact.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ApiService {
    #[serde(default, deserialize_with = "decode_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ServiceSpec>,
}

/// [`EndpointSlice`] as the API's JSON spells it: the Service's name is a label.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ApiEndpointSlice {
    #[serde(default, deserialize_with = "decode_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, rename = "addressType", deserialize_with = "null_as_default")]
    pub address_type: AddressType,
    #[serde(default, deserialize_with = "null_as_default_shrunk")]
    pub endpoints: Vec<Endpoint>,
    #[serde(default, deserialize_with = "shrunk", skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<EndpointPort>>,
}

impl From<&ApiIngress> for Ingress {
    /// A clone: vectors get exact capacities (serde grew them by doubling).
    fn from(ingress: &ApiIngress) -> Self {
        let ApiIngress { metadata, spec, status } = ingress.clone();
        networking::Ingress { metadata, spec, status }.into()
    }
}

impl From<Ingress> for ApiIngress {
    fn from(ingress: Ingress) -> Self {
        let networking::Ingress { metadata, spec, status } = ingress.into();
        ApiIngress { metadata, spec, status }
    }
}

impl From<ApiService> for Service {
    fn from(service: ApiService) -> Self {
        Service {
            metadata: service.metadata.into(),
            spec: service.spec,
        }
    }
}

impl From<ApiEndpointSlice> for EndpointSlice {
    fn from(slice: ApiEndpointSlice) -> Self {
        EndpointSlice::from_parts(slice.metadata, slice.address_type, slice.endpoints, slice.ports)
    }
}

// === impl Resource, Metadata ===

resource!(
    ApiIngress,
    "networking.k8s.io",
    "v1",
    "Ingress",
    "ingresses",
    NamespaceResourceScope
);
resource!(ApiService, "", "v1", "Service", "services", NamespaceResourceScope);
resource!(
    super::tke::TkeServiceConfig,
    "cloud.tencent.com",
    "v1alpha1",
    "TkeServiceConfig",
    "tkeserviceconfigs",
    NamespaceResourceScope
);
resource!(
    ApiEndpointSlice,
    "discovery.k8s.io",
    "v1",
    "EndpointSlice",
    "endpointslices",
    NamespaceResourceScope
);
