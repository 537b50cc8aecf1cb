//! Services and EndpointSlices as the watcher decodes them: with k8s-openapi's `ObjectMeta`, which
//! kube's `Resource` requires (the watcher resumes from `resourceVersion`). They implement
//! k8s-openapi's `Resource` with the API's group, version, kind and plural, so kube's `Api<K>`
//! lists and watches the same URLs; the store keeps each as its compact form ([`Service`],
//! [`EndpointSlice`]), converted on arrival.

use k8s_openapi::{NamespaceResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use serde::{Deserialize, Serialize};

use super::{
    AddressType, Endpoint, EndpointPort, EndpointSlice, Service, ServiceSpec, null_as_default, null_as_default_shrunk,
    resource::resource, shrunk,
};

/// A Service as listed: its metadata whole, its spec already compact.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ApiService {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ServiceSpec>,
}

/// [`EndpointSlice`] as the API's JSON spells it: the Service's name is a label.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ApiEndpointSlice {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, rename = "addressType", deserialize_with = "null_as_default")]
    pub address_type: AddressType,
    #[serde(default, deserialize_with = "null_as_default_shrunk")]
    pub endpoints: Vec<Endpoint>,
    #[serde(default, deserialize_with = "shrunk", skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<EndpointPort>>,
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
