//! `--shadow-gateway-class`: another implementation's Gateways' routes served by `shunt serve`
//! for in-cluster callers, refused where shunt cannot answer as that implementation would, with
//! no status of theirs in `/gateway`; `shunt dns` and `shunt shadow report` agree.

use http::StatusCode;
use serde_json::{Value, json};

use crate::{
    dns::{TARGET, shunt_dns, stdout},
    support::*,
};

const OBJECTS: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: theirs}
spec: {controllerName: example.net/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: edge}
spec:
  gatewayClassName: theirs
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: shop}
spec:
  parentRefs: [{name: edge}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: guarded}
spec:
  parentRefs: [{name: edge}]
  hostnames: [pay.example.com]
  rules: [{filters: [{type: ExtensionRef, extensionRef: {group: example.net, kind: Waf, name: strict}}],
           backendRefs: [{name: web, port: 80}]}]
"#;

const FLAG: [&str; 2] = ["--shadow-gateway-class", "theirs"];

fn manifests(backend: &Backend) -> Manifests {
    let manifests = Manifests::new();
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "shop", "name": "web"},
                         "spec": {"ports": [{"name": "http", "port": 80}]}});
    let mut objects = vec![service];
    objects.extend(
        mk_slice("shop", "web", backend.port())
            .port_name("http")
            .ready("127.0.0.1")
            .documents(),
    );
    manifests.write("web.yaml", &[&objects]);
    manifests.write_text("gateway.yaml", OBJECTS);
    manifests
}

/// (host, verdict, reasons) of a document's `hosts`.
fn verdicts(document: &Value) -> Vec<(String, String, Vec<Value>)> {
    let hosts = document["hosts"].as_array().expect("hosts");
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    hosts
        .iter()
        .map(|h| {
            (
                text(&h["host"]),
                text(&h["verdict"]),
                h["reasons"].as_array().cloned().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn shadowed_routes_are_served_refused_routes_are_not_and_no_status_is_theirs() {
    let backend = Backend::http1("web").start().await;
    let manifests = manifests(&backend);
    let shunt = Shunt::start(manifests.path(), &FLAG).await;
    let reply = shunt.get("shop.example.com", "/").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.backend(), "web");
    assert_eq!(shunt.get("pay.example.com", "/").await.status, StatusCode::NOT_FOUND);
    let expected = [
        (
            "pay.example.com".to_string(),
            "refused".to_string(),
            vec![json!(
                "ExtensionRef: filter Waf strict is the other implementation's extension"
            )],
        ),
        ("shop.example.com".to_string(), "identical".to_string(), vec![]),
    ];
    assert_eq!(verdicts(&shunt.admin("/shadow-gateway").await.json()), expected);
    let status = shunt.admin("/gateway").await.json();
    assert_eq!(status["gateways"], json!([]));
    assert_eq!(status["routes"], json!([]));
    let metrics = shunt.metrics().await;
    for (verdict, hosts) in [("identical", 1.0), ("refused", 1.0)] {
        let counted = sample(&metrics, "shunt_shadow_hosts", &[("verdict", verdict)]);
        assert_eq!(counted, Some(hosts), "{verdict} hosts on /metrics");
    }

    let printed = stdout(&shunt_dns(&manifests, &["--coredns-version", "1.9.4", FLAG[0], FLAG[1]]).await);
    assert_eq!(
        printed,
        format!(
            "# BEGIN shunt shunt-system/shunt\nrewrite name exact shop.example.com {TARGET}\n# END shunt shunt-system/shunt\n"
        )
    );
    let report = tokio::process::Command::from(crate::support::launch::shunt())
        .args(["shadow", "report", "--json", "--manifests"])
        .arg(manifests.path())
        .args(FLAG)
        .output()
        .await
        .expect("shunt runs");
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let report: Value = serde_json::from_slice(&report.stdout).expect("JSON");
    assert_eq!(verdicts(&report), expected);
    assert_eq!(report["summary"]["refused"], 1);
}

#[tokio::test]
async fn without_the_flag_another_implementations_routes_stay_theirs() {
    let backend = Backend::http1("web").start().await;
    let manifests = manifests(&backend);
    let shunt = Shunt::start(manifests.path(), &[]).await;
    assert_eq!(shunt.get("shop.example.com", "/").await.status, StatusCode::NOT_FOUND);
    assert_eq!(shunt.admin("/shadow-gateway").await.status, StatusCode::NOT_FOUND);
}
