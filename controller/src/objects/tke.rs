//! TKE's `TkeServiceConfig` (`cloud.tencent.com/v1alpha1`): the CLB settings an Ingress's
//! `ingress.cloud.tencent.com/tke-service-config` annotation names. Its `spec` is kept as JSON:
//! the qcloud profile reads it (`shadow/qcloud/service_config.rs`) and refuses what does not
//! parse, so a config no schema of ours describes never fails a manifest or a watch.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct TkeServiceConfig {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<serde_json::Value>,
}
