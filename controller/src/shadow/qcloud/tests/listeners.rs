//! Which listener serves which rule: without TLS, with it, `rule-mix` and its lists, `rule-mix-both`.

use super::*;

#[test]
fn without_tls_an_ingress_is_http_only_and_identical() {
    let compiled = compile_tke(
        r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: plain
  annotations: {kubernetes.io/ingress.class: qcloud}
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#,
    );
    assert_eq!(answer(&compiled, PLAIN, "shop.example.com", "/x"), WEB);
    assert_eq!(answer(&compiled, TLS, "shop.example.com", "/x"), "404");
    let verdict = verdict(&compiled, "shop.example.com");
    assert_eq!(verdict.verdict, Verdict::Identical);
    assert_eq!(verdict.listeners, ["http"]);
    assert!(compiled.table.documents.contains_key("shadow"));
}

/// TKE's mixed-rules example: `rule-mix` with `http-rules` and `https-rules`.
const RULE_MIX: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: mixed
  annotations:
    kubernetes.io/ingress.class: qcloud
    kubernetes.io/ingress.rule-mix: "true"
    kubernetes.io/ingress.http-rules: '[{"host":"mix.example.com","path":"/plain","backend":{"serviceName":"api","servicePort":"80"}},{"path":"/","backend":{"serviceName":"web","servicePort":"80"}}]'
    kubernetes.io/ingress.https-rules: '[{"host":"mix.example.com","path":"/secure","backend":{"serviceName":"web","servicePort":"80"}}]'
    shunt.dev/tls-secret: mix-tls
spec:
  tls:
  - hosts: [mix.example.com]
    secretName: mix-cert
  rules:
  - host: mix.example.com
    http:
      paths:
      - {path: /plain, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /secure, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /neither, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
  - http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#;

/// The `spec.tls` Secret TKE reads: its certificate id.
const MIX_CERT_ID: &str = "apiVersion: v1\nkind: Secret\nmetadata: {namespace: shop, name: mix-cert}\ntype: Opaque\nstringData: {qcloud_cert_id: Xxh1WJ3k}\n";

#[test]
fn rule_mix_puts_each_rule_on_the_listeners_its_annotations_name() {
    let mut state = mk_state(&format!("{RULE_MIX}\n---\n{MIX_CERT_ID}"));
    state
        .secrets
        .push(mk_tls_secret("mix-tls", &["mix.example.com"]).into());
    let compiled = compile(&state, &mk_options());
    assert_eq!(answer(&compiled, PLAIN, "mix.example.com", "/plain"), API);
    assert_eq!(
        answer(&compiled, TLS, "mix.example.com", "/plain"),
        "404",
        "http-rules only"
    );
    assert_eq!(answer(&compiled, TLS, "mix.example.com", "/secure"), WEB);
    assert_eq!(
        answer(&compiled, PLAIN, "mix.example.com", "/secure"),
        "404",
        "https-rules only"
    );
    assert_eq!(
        answer(&compiled, TLS, "mix.example.com", "/neither"),
        API,
        "in neither: HTTPS"
    );
    assert_eq!(answer(&compiled, PLAIN, "mix.example.com", "/neither"), "404");
    // A host-less http-rules entry is the default domain, on HTTP only.
    assert_eq!(answer(&compiled, PLAIN, "unknown.example.org", "/any"), WEB);
    assert_eq!(answer(&compiled, TLS, "unknown.example.org", "/any"), "404");
    assert_eq!(verdict(&compiled, "mix.example.com").listeners, ["http", "https"]);
    assert_eq!(verdict(&compiled, "mix.example.com").verdict, Verdict::Identical);
}

#[test]
fn null_rules_mean_none_and_every_spec_rule_goes_to_https() {
    let nulls = RULE_MIX
        .replace(
            r#"kubernetes.io/ingress.http-rules: '[{"host":"mix.example.com","path":"/plain","backend":{"serviceName":"api","servicePort":"80"}},{"path":"/","backend":{"serviceName":"web","servicePort":"80"}}]'"#,
            r#"kubernetes.io/ingress.http-rules: "null""#,
        )
        .replace(
            r#"kubernetes.io/ingress.https-rules: '[{"host":"mix.example.com","path":"/secure","backend":{"serviceName":"web","servicePort":"80"}}]'"#,
            r#"kubernetes.io/ingress.https-rules: "null""#,
        );
    assert!(nulls.contains("\"null\""), "both annotations replaced");
    let compiled = compile_tke(&nulls);
    for path in ["/plain", "/secure", "/neither"] {
        assert_eq!(answer(&compiled, PLAIN, "mix.example.com", path), "404", "{path}");
    }
    assert_eq!(answer(&compiled, TLS, "mix.example.com", "/plain"), API);
    assert_eq!(
        answer(&compiled, TLS, "other.example.org", "/"),
        WEB,
        "the default domain, on HTTPS"
    );
}

#[test]
fn rule_mix_both_puts_every_rule_on_both_listeners() {
    let both = RULE_MIX.replace(
        r#"kubernetes.io/ingress.rule-mix: "true""#,
        r#"kubernetes.io/ingress.rule-mix-both: "true""#,
    );
    let compiled = compile_tke(&both);
    for tls in [PLAIN, TLS] {
        assert_eq!(answer(&compiled, tls, "mix.example.com", "/neither"), API);
        assert_eq!(answer(&compiled, tls, "mix.example.com", "/secure"), WEB);
    }
}
