//! Certificates for HTTPS hosts: a Tencent certificate id is refused, `shunt.dev/tls-secret` and
//! `--shadow-tls` serve.

use super::*;

/// TKE's TLS example: `spec.tls` names an Opaque Secret holding a Tencent certificate id.
const TLS_ONLY: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: secure
  annotations: {kubernetes.io/ingress.class: qcloud}
spec:
  tls:
  - hosts: [secure.example.com]
    secretName: secure-cert
  rules:
  - host: secure.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: Secret
metadata: {namespace: shop, name: secure-cert}
type: Opaque
stringData: {qcloud_cert_id: Xxh1WJ3k}
"#;

#[test]
fn a_tls_only_ingress_is_not_answered_on_http_and_a_cert_id_secret_is_refused() {
    let compiled = compile_tke(TLS_ONLY);
    assert_eq!(answer(&compiled, TLS, "secure.example.com", "/x"), WEB);
    assert_eq!(answer(&compiled, PLAIN, "secure.example.com", "/x"), "404");
    assert_eq!(reasons(&compiled, "secure.example.com"), ["CertificateUnavailable"]);
    assert!(verdict(&compiled, "secure.example.com").reasons[0].contains("qcloud_cert_id"));
    assert!(
        compiled.table.tls.hosts.is_empty(),
        "never the cert-id Secret, never a fallback binding"
    );
    let refused: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.reason == Reason::ShadowRefused)
        .map(|d| (d.name.as_str(), d.message.contains("secure.example.com")))
        .collect();
    assert_eq!(refused, [("secure", true)]);
}

#[test]
fn shunts_tls_secret_annotation_makes_the_host_identical_and_serves_that_certificate() {
    let annotated = TLS_ONLY.replace(
        "annotations: {kubernetes.io/ingress.class: qcloud}",
        "annotations: {kubernetes.io/ingress.class: qcloud, shunt.dev/tls-secret: secure-tls}",
    );
    let mut state = mk_state(&annotated);
    state
        .secrets
        .push(mk_tls_secret("secure-tls", &["secure.example.com"]).into());
    let compiled = compile(&state, &mk_options());
    let verdict = verdict(&compiled, "secure.example.com");
    assert_eq!(
        (verdict.verdict, verdict.reasons.to_vec()),
        (Verdict::Identical, vec![])
    );
    assert_eq!(verdict.certificate.as_deref(), Some("shop/secure-tls"));
    assert_eq!(
        compiled.table.tls.hosts,
        BTreeMap::from([(
            HostMatch::Exact("secure.example.com".into()),
            "shop/secure-tls".to_string()
        )])
    );
}

#[test]
fn shadow_tls_flag_maps_a_host_to_a_secret_anywhere() {
    let mut state = mk_state(TLS_ONLY);
    let mut elsewhere = mk_tls_secret("wildcard", &["*.example.com"]);
    elsewhere.metadata.namespace = Some("certs".into());
    state.secrets.push(elsewhere.into());
    let mut options = mk_options();
    options
        .shadow
        .tls
        .insert("secure.example.com".into(), ("certs".into(), "wildcard".into()));
    let compiled = compile(&state, &options);
    assert_eq!(verdict(&compiled, "secure.example.com").verdict, Verdict::Identical);
    assert_eq!(
        verdict(&compiled, "secure.example.com").certificate.as_deref(),
        Some("certs/wildcard")
    );
}
