//! `--shadow-gateway-class` against the real API server: another implementation's
//! GatewayClass and Gateway (their CRD validation included), a route served by `shunt run`, a
//! route with an ExtensionRef refused and reported, and no status written by shunt for any of
//! them.

use std::time::Duration;

use http::StatusCode;
use serde_json::{Value, json};

use super::{
    envtest::{Real, mk_pod_slice},
    eventually, mk_service, until_served_by,
};

const WITHIN: Duration = Duration::from_secs(20);
const GROUP: &str = "gateway.networking.k8s.io/v1";

fn mk_route(ns: &str, name: &str, host: &str, filters: Value) -> Value {
    json!({"apiVersion": GROUP, "kind": "HTTPRoute", "metadata": {"namespace": ns, "name": name},
           "spec": {"parentRefs": [{"name": "edge"}], "hostnames": [host],
                    "rules": [{"filters": filters, "backendRefs": [{"name": "blue", "port": 80}]}]}})
}

#[tokio::test]
async fn a_shadowed_class_is_served_refused_routes_reported_and_no_status_written() {
    let Some(real) = Real::start_with_gateway_api("gateway-shadow").await else {
        return;
    };
    let Some(blue) = real.pod_backend("blue").await else {
        return;
    };
    let ns = &real.ns;
    let class = format!("theirs-{ns}");
    real.apply(
        json!({"apiVersion": GROUP, "kind": "GatewayClass", "metadata": {"name": class},
                      "spec": {"controllerName": "example.net/gateway"}}),
    )
    .await;
    real.apply(
        json!({"apiVersion": GROUP, "kind": "Gateway", "metadata": {"namespace": ns, "name": "edge"},
        "spec": {"gatewayClassName": class, "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}),
    )
    .await;
    real.apply(mk_service(ns, "blue")).await;
    real.apply(mk_pod_slice(ns, "blue-1", "blue", &blue)).await;
    real.apply(mk_route(ns, "shop", "shop.example", json!([]))).await;
    let extension =
        json!([{"type": "ExtensionRef", "extensionRef": {"group": "example.net", "kind": "Waf", "name": "strict"}}]);
    real.apply(mk_route(ns, "guarded", "pay.example", extension)).await;
    let mut versions = Vec::new();
    for (kind, name) in [
        ("GatewayClass", class.as_str()),
        ("Gateway", "edge"),
        ("HTTPRoute", "shop"),
        ("HTTPRoute", "guarded"),
    ] {
        let stored = real.kube.get(kind, name).await.expect("stored");
        versions.push((kind, name.to_string(), stored["metadata"]["resourceVersion"].clone()));
    }
    let shunt = real.shunt("shunt-0", &["--shadow-gateway-class", &class]).await;
    until_served_by(&shunt, "shop.example", "blue", WITHIN).await;
    let refused = shunt.get("pay.example", "/").await.expect("an answer");
    assert_eq!(refused.status, StatusCode::NOT_FOUND);

    let report: Value = eventually("the refused route reported", WITHIN, async || {
        let reply = shunt.admin_get("/shadow-gateway").await.ok()?;
        serde_json::from_str(&reply.body).ok()
    })
    .await;
    let hosts = report["hosts"].as_array().expect("hosts");
    let verdict = |host: &str| hosts.iter().find(|h| h["host"] == host).map(|h| h["verdict"].clone());
    assert_eq!(verdict("pay.example"), Some(json!("refused")));
    assert_eq!(verdict("shop.example"), Some(json!("identical")));

    // shunt (the leader: it serves) writes status only for its own class: theirs keep the
    // version they were applied at, by then compiled and served.
    for (kind, name, applied) in &versions {
        let stored = real.kube.get(kind, name).await.expect("stored");
        assert_eq!(
            &stored["metadata"]["resourceVersion"], applied,
            "{kind} {name}: {}",
            stored["status"]
        );
    }
    let route = real.kube.get("HTTPRoute", "shop").await.expect("stored");
    assert!(
        route["status"]["parents"].as_array().is_none_or(Vec::is_empty),
        "{}",
        route["status"]
    );
    real.kube.delete("GatewayClass", &class).await;
}
