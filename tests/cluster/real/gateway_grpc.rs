//! GRPCRoute on the real API server with the v1.6.1 standard CRDs: `shunt run` watches it,
//! the leader writes its parents' status through the
//! subresource, the CRD's validation takes what shunt writes, and a GRPCRoute whose hostname
//! meets an older HTTPRoute's on the listener is refused as the spec says.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    envtest::{Real, mk_pod_slice},
    eventually, mk_service,
};

const WITHIN: Duration = Duration::from_secs(20);
const GROUP: &str = "gateway.networking.k8s.io/v1";

fn mk_grpc_route(ns: &str, name: &str, host: &str, service: &str) -> Value {
    json!({"apiVersion": GROUP, "kind": "GRPCRoute", "metadata": {"namespace": ns, "name": name},
           "spec": {"parentRefs": [{"name": "web"}], "hostnames": [host],
                    "rules": [{"matches": [{"method": {"service": "pkg.Echo", "method": "Call"}}],
                               "backendRefs": [{"name": service, "port": 80}]}]}})
}

/// `(type, status, reason)` of our parent's conditions once written.
async fn parent_conditions(real: &Real, name: &str) -> Vec<(String, String, String)> {
    let status = eventually(&format!("the status of GRPCRoute {name}"), WITHIN, async || {
        let status = real.kube.get("GRPCRoute", name).await?["status"].clone();
        (!status["parents"].is_null()).then_some(status)
    })
    .await;
    let text = |c: &Value, key: &str| c[key].as_str().unwrap_or_default().to_string();
    let conditions = status["parents"][0]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions
        .iter()
        .map(|c| (text(c, "type"), text(c, "status"), text(c, "reason")))
        .collect()
}

fn condition(type_: &str, status: &str, reason: &str) -> (String, String, String) {
    (type_.into(), status.into(), reason.into())
}

#[tokio::test]
async fn grpc_routes_are_watched_and_the_leader_writes_their_status() {
    let Some(real) = Real::start_with_gateway_api("gateway-grpc").await else {
        return;
    };
    let Some(pod) = real.pod_backend("rpc").await else {
        return;
    };
    let ns = &real.ns;
    let class = format!("shunt-{ns}");
    real.apply(
        json!({"apiVersion": GROUP, "kind": "GatewayClass", "metadata": {"name": class},
                      "spec": {"controllerName": "shunt.dev/gateway-controller"}}),
    )
    .await;
    real.apply(json!({"apiVersion": GROUP, "kind": "Gateway", "metadata": {"namespace": ns, "name": "web"},
                      "spec": {"gatewayClassName": class, "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}))
        .await;
    real.apply(mk_service(ns, "rpc")).await;
    real.apply(mk_pod_slice(ns, "rpc-1", "rpc", &pod)).await;
    real.apply(json!({"apiVersion": GROUP, "kind": "HTTPRoute",
                      "metadata": {"namespace": ns, "name": "site"},
                      "spec": {"parentRefs": [{"name": "web"}], "hostnames": ["shared.example"],
                               "rules": [{"backendRefs": [{"name": "rpc", "port": 80}]}]}}))
        .await;
    // Created after the HTTPRoute (or in the same second, then after it by name): the HTTPRoute
    // keeps the shared hostname.
    real.apply(mk_grpc_route(ns, "rpc", "rpc.example", "rpc")).await;
    real.apply(mk_grpc_route(ns, "zz-late", "shared.example", "rpc")).await;
    real.apply(mk_grpc_route(ns, "broken", "broken.example", "missing"))
        .await;
    let _shunt = real.shunt("shunt-0", &[]).await;

    assert_eq!(
        parent_conditions(&real, "rpc").await,
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    assert_eq!(
        parent_conditions(&real, "broken").await[1],
        condition("ResolvedRefs", "False", "BackendNotFound")
    );
    assert_eq!(
        parent_conditions(&real, "zz-late").await[0],
        condition("Accepted", "False", "HostnameConflict")
    );
    let gateway = eventually("the Gateway's listener status", WITHIN, async || {
        let status = real.kube.get("Gateway", "web").await?["status"].clone();
        (status["listeners"][0]["attachedRoutes"] == 3).then_some(status)
    })
    .await;
    let kinds = &gateway["listeners"][0]["supportedKinds"];
    assert!(
        kinds
            .as_array()
            .is_some_and(|kinds| kinds.contains(&json!({"group": "gateway.networking.k8s.io", "kind": "GRPCRoute"}))),
        "{kinds}"
    );
    real.kube.delete("GatewayClass", &class).await;
}
