//! GRPCRoute on the real API server with the v1.6.1 standard CRDs: `shunt run` watches it,
//! the leader writes its parents' status through the
//! subresource, the CRD's validation takes what shunt writes, and a GRPCRoute whose hostname
//! meets an older HTTPRoute's on the listener is refused as the spec says.

use serde_json::{Value, json};

use super::{
    envtest::{Real, mk_pod_slice},
    eventually,
    gateway::{GROUP, WITHIN, mk_class, mk_gateway, status_when, summary},
    mk_service,
};

fn mk_grpc_route(ns: &str, name: &str, host: &str, service: &str) -> Value {
    json!({"apiVersion": GROUP, "kind": "GRPCRoute", "metadata": {"namespace": ns, "name": name},
           "spec": {"parentRefs": [{"name": "web"}], "hostnames": [host],
                    "rules": [{"matches": [{"method": {"service": "pkg.Echo", "method": "Call"}}],
                               "backendRefs": [{"name": service, "port": 80}]}]}})
}

/// `(type, status, reason)` of our parent's conditions once written.
async fn parent_conditions(real: &Real, name: &str) -> Vec<(String, String, String)> {
    let status = status_when(real, "GRPCRoute", name, |s| !s["parents"].is_null()).await;
    summary(&status["parents"][0]["conditions"])
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
    real.apply(mk_class(&class)).await;
    real.apply(mk_gateway(ns, &class)).await;
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
