//! TKE's own refusals, mirrored: where TKE rejects the Ingress or part of it, the CLB answers
//! nothing there, so the host stays on the load balancer with the TKE error named.

use super::*;

/// A VPC-CNI cluster's usual shape: a ClusterIP Service the CLB reaches pods of directly.
const DIRECT: &str = r#"
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: pods}
spec: {type: ClusterIP, ports: [{name: http, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: direct
  annotations: {kubernetes.io/ingress.class: qcloud, ingress.cloud.tencent.com/direct-access: "true"}
spec:
  rules:
  - host: direct.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: pods, port: {number: 80}}}}
"#;

#[test]
fn a_clusterip_backend_is_served_with_direct_access() {
    let compiled = compile_tke(DIRECT);
    assert_eq!(verdict(&compiled, "direct.example.com").verdict, Verdict::Identical);
    assert_eq!(answer(&compiled, PLAIN, "direct.example.com", "/"), "shop/pods:80");
}

#[test]
fn a_clusterip_backend_without_direct_access_is_tkes_e4047_and_not_routed() {
    let compiled = compile_tke(&DIRECT.replace(r#", ingress.cloud.tencent.com/direct-access: "true""#, ""));
    let verdict = verdict(&compiled, "direct.example.com");
    assert_eq!(reasons(&compiled, "direct.example.com"), ["TkeRejects"]);
    assert!(
        verdict.reasons[0].starts_with("TkeRejects: E4047 Service shop/pods is ClusterIP"),
        "{verdict:?}"
    );
    assert_eq!(answer(&compiled, PLAIN, "direct.example.com", "/"), "404");
}

/// A TLS Ingress whose `spec.tls` names a PEM Secret, as one moved from another controller does.
const PEM: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: pem
  annotations: {kubernetes.io/ingress.class: qcloud}
spec:
  tls:
  - hosts: [pem.example.com]
    secretName: pem-cert
  rules:
  - host: pem.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#;

#[test]
fn a_pem_secret_without_qcloud_cert_id_is_tkes_e4011_whatever_certificate_shunt_is_given() {
    let mut state = mk_state(PEM);
    state
        .secrets
        .push(mk_tls_secret("pem-cert", &["pem.example.com"]).into());
    let mut options = mk_options();
    options
        .shadow
        .tls
        .insert("pem.example.com".into(), ("shop".into(), "pem-cert".into()));
    let compiled = compile(&state, &options);
    let verdict = verdict(&compiled, "pem.example.com");
    assert_eq!(
        verdict.reasons,
        ["TkeRejects: E4011 Secret shop/pem-cert has no qcloud_cert_id: the CLB has no HTTPS for \"pem.example.com\""]
    );
    assert!(compiled.table.tls.hosts.is_empty(), "no HTTPS where the CLB has none");
}

#[test]
fn a_tls_entry_without_a_secret_name_is_tkes_e4009() {
    let compiled = compile_tke(&PEM.replace("    secretName: pem-cert\n", ""));
    assert_eq!(reasons(&compiled, "pem.example.com"), ["TkeRejects"]);
    assert!(verdict(&compiled, "pem.example.com").reasons[0].starts_with("TkeRejects: E4009"));
}

#[test]
fn a_tls_secret_that_does_not_exist_is_tkes_e4010_where_every_secret_is_listed() {
    // Manifests hold every Secret: `pem-cert` is not among them.
    let mut options = mk_options();
    options
        .shadow
        .tls
        .insert("pem.example.com".into(), ("shop".into(), "given".into()));
    let mut state = mk_state(PEM);
    state.secrets.push(mk_tls_secret("given", &["pem.example.com"]).into());
    let compiled = compile(&state, &options);
    assert_eq!(
        verdict(&compiled, "pem.example.com").reasons,
        ["TkeRejects: E4010 Secret shop/pem-cert not found: the CLB has no HTTPS for \"pem.example.com\""]
    );
    assert!(compiled.table.tls.hosts.is_empty(), "no HTTPS where the CLB has none");
    // A cluster's watch holds `kubernetes.io/tls` Secrets only: TKE's Opaque one may exist.
    state.secrets_listed = false;
    let compiled = compile(&state, &options);
    assert_eq!(verdict(&compiled, "pem.example.com").verdict, Verdict::Identical);
}
