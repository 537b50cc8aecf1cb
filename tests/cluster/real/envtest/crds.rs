//! The Gateway API v1.6.1 standard CRDs (`../shared/gateway-api/crds`, test data: see its
//! LICENSE), installed on the Gateway API tests' own control plane and awaited until served.

use std::{path::PathBuf, time::Duration};

use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams},
};
use serde_json::Value;

use super::super::eventually;

/// Where the CRDs are: `$SHUNT_GATEWAY_API_CRDS`, else `../shared/gateway-api/crds` beside the
/// repository.
fn dir() -> PathBuf {
    match std::env::var_os("SHUNT_GATEWAY_API_CRDS") {
        Some(dir) => dir.into(),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gateway-api/crds"),
    }
}

/// The standard channel's CustomResourceDefinitions, or `None` (said once) when absent.
pub fn standard() -> Option<Vec<Value>> {
    let dir = dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        super::say_skipped("Gateway API tests", &format!("no CRDs in {}", dir.display()));
        return None;
    };
    let mut crds = Vec::new();
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("a readable CRD file");
        let objects: Vec<Value> = serde_saphyr::from_str_multiple(&text).expect("YAML objects");
        for object in objects {
            let channel = &object["metadata"]["annotations"]["gateway.networking.k8s.io/channel"];
            if object["kind"] == "CustomResourceDefinition" && channel == "standard" {
                crds.push(object);
            }
        }
    }
    Some(crds)
}

/// Applies `crds` and waits until the API server serves the kinds shunt reads.
pub async fn install(client: &Client, crds: Vec<Value>) {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ApiResource::from_gvk(&gvk));
    let params = PatchParams::apply("shunt-tests").force();
    for crd in crds {
        let name = crd["metadata"]["name"].as_str().expect("a named CRD").to_string();
        (api.patch(&name, &params, &Patch::Apply(&crd)).await).unwrap_or_else(|e| panic!("applying CRD {name}: {e}"));
    }
    for (version, plural) in [
        ("v1", "gatewayclasses"),
        ("v1", "gateways"),
        ("v1", "httproutes"),
        ("v1", "grpcroutes"),
        ("v1beta1", "referencegrants"),
    ] {
        let gvk = GroupVersionKind::gvk("gateway.networking.k8s.io", version, "");
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ApiResource::from_gvk_with_plural(&gvk, plural));
        eventually(plural, Duration::from_secs(30), async || {
            api.list(&ListParams::default().limit(1)).await.ok().map(drop)
        })
        .await;
    }
}
