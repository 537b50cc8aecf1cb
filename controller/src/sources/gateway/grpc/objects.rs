//! GRPCRoute (`gateway.networking.k8s.io/v1`) as shunt reads it. Its parentRefs, hostnames,
//! header matches, filters and backendRefs have HTTPRoute's shape and reuse its types; only the
//! match on `/{service}/{method}` is its own.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::super::objects::{HTTPBackendRef, HTTPRouteFilter, ParentRef, ValueMatch};
use crate::objects::resource;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GRPCRoute {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: GRPCRouteSpec,
    /// As the API server holds it: the compile never reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GRPCRouteSpec {
    #[serde(default)]
    pub parent_refs: Vec<ParentRef>,
    #[serde(default)]
    pub hostnames: Vec<String>,
    #[serde(default)]
    pub rules: Vec<GRPCRouteRule>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GRPCRouteRule {
    /// As HTTPRoute's rule's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// No matches means one that takes every request.
    #[serde(default)]
    pub matches: Vec<GRPCRouteMatch>,
    #[serde(default)]
    pub filters: Vec<HTTPRouteFilter>,
    #[serde(default)]
    pub backend_refs: Vec<HTTPBackendRef>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GRPCRouteMatch {
    /// Every service and method when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<GRPCMethodMatch>,
    #[serde(default)]
    pub headers: Vec<ValueMatch>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GRPCMethodMatch {
    /// `Exact` when unset.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Any service when unset or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Any method when unset or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

resource!(
    GRPCRoute,
    "gateway.networking.k8s.io",
    "v1",
    "GRPCRoute",
    "grpcroutes",
    k8s_openapi::NamespaceResourceScope
);
