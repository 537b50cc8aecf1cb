//! A Namespace as shunt reads it: its name and labels, for the Gateway API listeners whose
//! `allowedRoutes.namespaces.from` is `Selector`. `spec` and `status` are skipped while parsing.

use k8s_openapi::{ClusterResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use serde::{Deserialize, Serialize};

use super::resource;

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct Namespace {
    #[serde(default)]
    pub metadata: ObjectMeta,
}

resource!(Namespace, "", "v1", "Namespace", "namespaces", ClusterResourceScope);
