//! A Namespace as shunt reads it: its name and labels, for the Gateway API listeners whose
//! `allowedRoutes.namespaces.from` is `Selector`. `spec` and `status` are skipped while parsing.

use k8s_openapi::{ClusterResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct Namespace {
    #[serde(default)]
    pub metadata: ObjectMeta,
}

impl k8s_openapi::Resource for Namespace {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Namespace";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "namespaces";
    type Scope = ClusterResourceScope;
}

impl k8s_openapi::ListableResource for Namespace {
    const LIST_KIND: &'static str = "NamespaceList";
}

impl k8s_openapi::Metadata for Namespace {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}
