//! The TKE annotation table: reproduced keys route, no-effect keys leave the host identical (and
//! are listed in `/shadow`), any other key under a TKE prefix refuses with its key named.

use super::*;

/// A VPC-CNI cluster's Ingress as TKE's console writes it: an internal CLB in a subnet, pods
/// reached directly, graceful shutdown and weights on, a security group, deletion protection.
const CONSOLE: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: console
  annotations:
    kubernetes.io/ingress.class: qcloud
    kubernetes.io/ingress.subnetId: subnet-3ek9xx
    kubernetes.io/ingress.qcloud-loadbalance-id: lb-6swtxxxx
    ingress.cloud.tencent.com/direct-access: "true"
    ingress.cloud.tencent.com/pass-to-target: "true"
    ingress.cloud.tencent.com/grace-shutdown: "true"
    ingress.cloud.tencent.com/lb-rs-weight: '{"defaultWeight": 10}'
    ingress.cloud.tencent.com/security-groups: sg-xxxxxx
    ingress.cloud.tencent.com/deletion-protection: "true"
    ingress.cloud.tencent.com/cross-region-id: ap-guangzhou
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  rules:
  - host: console.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#;

#[test]
fn load_balancer_keys_change_nothing_a_caller_gets_and_are_listed() {
    let compiled = compile_tke(CONSOLE);
    let verdict = verdict(&compiled, "console.example.com");
    assert_eq!(
        (verdict.verdict, verdict.reasons.to_vec()),
        (Verdict::Identical, vec![])
    );
    assert_eq!(answer(&compiled, PLAIN, "console.example.com", "/x"), WEB);
    let document: serde_json::Value =
        serde_json::from_str(&compiled.table.documents["shadow"].text()).expect("the report is JSON");
    let listed: Vec<&str> = document["noEffect"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|key| key.as_str())
        .collect();
    for key in [
        "ingress.cloud.tencent.com/pass-to-target",
        "kubernetes.io/ingress.subnetId",
    ] {
        assert!(listed.contains(&key), "{key} in {listed:?}");
    }
}

#[test]
fn an_unknown_key_under_either_tke_prefix_refuses_the_host_naming_it() {
    for key in [
        "ingress.cloud.tencent.com/mode",
        "kubernetes.io/ingress.specify-protocol",
    ] {
        let annotated = CONSOLE.replace(
            "    kubernetes.io/ingress.class: qcloud\n",
            &format!("    kubernetes.io/ingress.class: qcloud\n    {key}: anything\n"),
        );
        let compiled = compile_tke(&annotated);
        let verdict = verdict(&compiled, "console.example.com");
        assert_eq!(verdict.reasons, [format!("UnsupportedAnnotation: {key}")]);
    }
}

#[test]
fn every_key_is_classified_once_and_the_prefixes_decide_the_rest() {
    use crate::shadow::qcloud::keys::{Class, NO_EFFECT, REPRODUCED, classify};
    for key in REPRODUCED {
        assert_eq!(classify(key), Class::Reproduced, "{key}");
        assert!(!NO_EFFECT.contains(&key), "{key} in both lists");
    }
    assert_eq!(classify("ingress.cloud.tencent.com/lb-rs-weight"), Class::NoEffect);
    assert_eq!(classify("ingress.cloud.tencent.com/new-feature"), Class::Refused);
    assert_eq!(classify("nginx.ingress.kubernetes.io/rewrite-target"), Class::Foreign);
}
