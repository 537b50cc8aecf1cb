//! A listener taking routes from the namespaces its label selector picks
//! (`allowedRoutes.namespaces.from: Selector`), against the real API server: the Namespace's
//! labels as the server stores them (`kubernetes.io/metadata.name` included), and a relabel
//! re-judging its routes.

use http::StatusCode;
use serde_json::{Value, json};

use super::{
    envtest::{Real, mk_pod_slice},
    eventually,
    gateway::{GROUP, WITHIN, mk_class},
    mk_service, until_served_by,
};

fn mk_namespace(ns: &str, team: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": team}}})
}

fn mk_selective_gateway(ns: &str, class: &str, selector: Value) -> Value {
    json!({"apiVersion": GROUP, "kind": "Gateway", "metadata": {"namespace": ns, "name": "selective"},
           "spec": {"gatewayClassName": class, "listeners": [{"name": "http", "port": 80, "protocol": "HTTP",
                    "allowedRoutes": {"namespaces": {"from": "Selector", "selector": selector}}}]}})
}

#[tokio::test]
async fn selector_listeners_judge_namespace_labels_and_follow_a_relabel() {
    let Some(real) = Real::start_with_gateway_api("gateway-selector").await else {
        return;
    };
    let Some(blue) = real.pod_backend("blue").await else {
        return;
    };
    let ns = &real.ns;
    let class = format!("shunt-{ns}");
    real.apply(mk_class(&class)).await;
    real.apply(mk_namespace(ns, "blue")).await;
    // The label the API server sets on every Namespace, with an expression.
    let selector = json!({"matchLabels": {"team": "blue"},
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": [ns]}]});
    real.apply(mk_selective_gateway(ns, &class, selector)).await;
    real.apply(mk_service(ns, "blue")).await;
    real.apply(mk_pod_slice(ns, "blue-1", "blue", &blue)).await;
    real.apply(
        json!({"apiVersion": GROUP, "kind": "HTTPRoute", "metadata": {"namespace": ns, "name": "api"},
        "spec": {"parentRefs": [{"name": "selective"}], "hostnames": ["selected.example"],
                 "rules": [{"backendRefs": [{"name": "blue", "port": 80}]}]}}),
    )
    .await;
    let shunt = real.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, "selected.example", "blue", WITHIN).await;

    real.apply(mk_namespace(ns, "red")).await;
    eventually("the relabelled namespace's route refused", WITHIN, async || {
        let route = real.kube.get("HTTPRoute", "api").await?;
        let reason = route["status"]["parents"][0]["conditions"][0]["reason"].clone();
        (reason == "NotAllowedByListeners").then_some(())
    })
    .await;
    let answer = shunt.get("selected.example", "/").await.expect("an answer");
    assert_eq!(answer.status, StatusCode::NOT_FOUND);

    real.apply(mk_namespace(ns, "blue")).await;
    until_served_by(&shunt, "selected.example", "blue", WITHIN).await;
    real.kube.delete("GatewayClass", &class).await;
}
