//! Gateway API on the real API server with the v1.6.1 standard CRDs (their validation included):
//! a GatewayClass, Gateway and HTTPRoute route traffic through `shunt run`, the leader writes
//! their status through the subresource (read back here), an HTTPRoute edit reaches traffic, and
//! a cluster without the CRDs runs as before.

use std::time::Duration;

use http::StatusCode;
use serde_json::{Value, json};

use super::{
    OURS, STATUS_ADDRESS,
    envtest::{Real, mk_pod_slice},
    eventually, mk_ingress, mk_service, until_served_by,
};

pub(super) const WITHIN: Duration = Duration::from_secs(20);
pub(super) const GROUP: &str = "gateway.networking.k8s.io/v1";

pub(super) fn mk_class(name: &str) -> Value {
    json!({"apiVersion": GROUP, "kind": "GatewayClass", "metadata": {"name": name},
           "spec": {"controllerName": "shunt.dev/gateway-controller"}})
}

pub(super) fn mk_gateway(ns: &str, class: &str) -> Value {
    json!({"apiVersion": GROUP, "kind": "Gateway", "metadata": {"namespace": ns, "name": "web"},
           "spec": {"gatewayClassName": class, "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}})
}

pub(super) fn mk_route(ns: &str, name: &str, host: &str, service: &str) -> Value {
    json!({"apiVersion": GROUP, "kind": "HTTPRoute", "metadata": {"namespace": ns, "name": name},
           "spec": {"parentRefs": [{"name": "web"}], "hostnames": [host],
                    "rules": [{"backendRefs": [{"name": service, "port": 80}]}]}})
}

/// `(type, status, reason)` of each condition in `conditions`.
pub(super) fn summary(conditions: &Value) -> Vec<(String, String, String)> {
    let text = |c: &Value, key: &str| c[key].as_str().unwrap_or_default().to_string();
    (conditions.as_array().into_iter().flatten())
        .map(|c| (text(c, "type"), text(c, "status"), text(c, "reason")))
        .collect()
}

pub(super) fn holds(conditions: &Value, type_: &str, reason: &str) -> bool {
    summary(conditions).contains(&(type_.to_string(), "True".to_string(), reason.to_string()))
}

/// The stored status of `kind` `name` once `ready` holds for it.
pub(super) async fn status_when(real: &Real, kind: &str, name: &str, ready: impl Fn(&Value) -> bool) -> Value {
    eventually(&format!("the status of {kind} {name}"), WITHIN, async || {
        let status = real.kube.get(kind, name).await?["status"].clone();
        ready(&status).then_some(status)
    })
    .await
}

#[tokio::test]
async fn routes_serve_and_the_leader_writes_their_status() {
    let Some(real) = Real::start_with_gateway_api("gateway").await else {
        return;
    };
    let (Some(blue), Some(green)) = (real.pod_backend("blue").await, real.pod_backend("green").await) else {
        return;
    };
    let ns = &real.ns;
    let class = format!("shunt-{ns}");
    real.apply(mk_class(&class)).await;
    real.apply(mk_gateway(ns, &class)).await;
    for (service, backend) in [("blue", &blue), ("green", &green)] {
        real.apply(mk_service(ns, service)).await;
        real.apply(mk_pod_slice(ns, &format!("{service}-1"), service, backend))
            .await;
    }
    real.apply(mk_route(ns, "api", "api.example", "blue")).await;
    real.apply(mk_route(ns, "broken", "broken.example", "missing")).await;
    let shunt = real.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, "api.example", "blue", WITHIN).await;

    let accepted = |s: &Value| holds(&s["conditions"], "Accepted", "Accepted");
    let class_status = status_when(&real, "GatewayClass", &class, accepted).await;
    assert_eq!(class_status["conditions"][0]["observedGeneration"], 1);
    assert!(
        class_status["supportedFeatures"]
            .as_array()
            .is_some_and(|f| f.contains(&json!({"name": "HTTPRoute"})))
    );
    let gateway = status_when(&real, "Gateway", "web", |s| {
        holds(&s["conditions"], "Programmed", "Programmed") && s["listeners"][0]["attachedRoutes"] == 2
    })
    .await;
    assert_eq!(
        gateway["addresses"],
        json!([{"type": "IPAddress", "value": STATUS_ADDRESS}])
    );
    assert!(holds(
        &gateway["listeners"][0]["conditions"],
        "ResolvedRefs",
        "ResolvedRefs"
    ));
    let route = status_when(&real, "HTTPRoute", "api", |s| !s["parents"].is_null()).await;
    let parent = &route["parents"][0];
    assert_eq!(parent["controllerName"], "shunt.dev/gateway-controller");
    assert!(
        holds(&parent["conditions"], "Accepted", "Accepted")
            && holds(&parent["conditions"], "ResolvedRefs", "ResolvedRefs")
    );
    let broken = status_when(&real, "HTTPRoute", "broken", |s| !s["parents"].is_null()).await;
    let resolved = &summary(&broken["parents"][0]["conditions"])[1];
    assert_eq!(
        resolved,
        &("ResolvedRefs".into(), "False".into(), "BackendNotFound".into())
    );
    let answer = shunt.get("broken.example", "/").await.expect("an answer");
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);

    // An edit reaches traffic and the route's observedGeneration; the Gateway, whose status
    // does not change, is not written again.
    let gateway_version = real.kube.get("Gateway", "web").await.expect("stored")["metadata"]["resourceVersion"].clone();
    let class_since = class_status["conditions"][0]["lastTransitionTime"].clone();
    real.apply(mk_route(ns, "api", "api.example", "green")).await;
    until_served_by(&shunt, "api.example", "green", WITHIN).await;
    status_when(&real, "HTTPRoute", "api", |s| {
        s["parents"][0]["conditions"][0]["observedGeneration"] == 2
    })
    .await;
    let gateway = real.kube.get("Gateway", "web").await.expect("stored");
    assert_eq!(gateway["metadata"]["resourceVersion"], gateway_version);
    let class_now = real.kube.get("GatewayClass", &class).await.expect("stored");
    assert_eq!(class_now["status"]["conditions"][0]["lastTransitionTime"], class_since);
    real.kube.delete("GatewayClass", &class).await;
}

#[tokio::test]
async fn without_the_crds_ingresses_serve_and_gateway_api_is_reported_absent() {
    let Some(real) = Real::start("no-gateway-api").await else {
        return;
    };
    let Some(origin) = real.pod_backend("web").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_pod_slice(ns, "web-1", "web", &origin)).await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    let shunt = real.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, "web.example", "web", WITHIN).await;
    shunt
        .wait_for_log("the CRDs reported absent", |line| {
            line["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Gateway API CRDs not installed"))
        })
        .await;
    let document = shunt.admin_get("/gateway").await.expect("an answer");
    assert_eq!(document.status, StatusCode::NOT_FOUND);
}
