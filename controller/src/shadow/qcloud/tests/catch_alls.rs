//! qcloud Ingresses without a host: the CLB's default domain, reached by its address only, which
//! DNS never moves. Each is listed and counted; a refused one is a diagnostic, never silent.

use super::*;
use crate::shadow::IngressKind;

const DEFAULT_ONLY: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: default-only
  annotations: {kubernetes.io/ingress.class: qcloud}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
"#;

#[test]
fn an_ingress_without_a_host_is_a_catch_all_listed_and_counted() {
    let compiled = compile_tke(DEFAULT_ONLY);
    assert_eq!(compiled.shadow.len(), 0);
    let entries: Vec<_> = compiled
        .shadow_ingresses
        .iter()
        .map(|entry| {
            (
                entry.ingress.as_str(),
                entry.class.as_str(),
                entry.kind,
                entry.reasons.len(),
            )
        })
        .collect();
    assert_eq!(entries, [("shop/default-only", "qcloud", IngressKind::CatchAll, 0)]);
    let document: serde_json::Value = serde_json::from_str(&compiled.table.documents["shadow"].text()).expect("JSON");
    assert_eq!(document["summary"]["catch_alls"], 1);
    assert_eq!(document["summary"]["ingresses"], 1);
    assert_eq!(
        document["catchAlls"][0]["reach"],
        "reachable by the load balancer's address only, not moved"
    );
}

#[test]
fn a_catch_all_with_a_refused_annotation_is_a_diagnostic() {
    let refused = DEFAULT_ONLY.replace(
        "annotations: {kubernetes.io/ingress.class: qcloud}",
        "annotations: {kubernetes.io/ingress.class: qcloud, ingress.cloud.tencent.com/mode: skip}",
    );
    let compiled = compile_tke(&refused);
    assert_eq!(
        compiled.shadow_ingresses[0].reasons,
        ["UnsupportedAnnotation: ingress.cloud.tencent.com/mode"]
    );
    let diagnostics: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.reason == Reason::ShadowRefused)
        .map(|d| (d.name.as_str(), d.message.contains("ingress.cloud.tencent.com/mode")))
        .collect();
    assert_eq!(diagnostics, [("default-only", true)]);
}
