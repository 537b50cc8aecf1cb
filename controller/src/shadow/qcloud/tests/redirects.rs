//! Redirects: `auto-rewrite` with its codes, and `rewrite` entries.

use super::*;

/// TKE's redirect example: `auto-rewrite` with a default and a per-host code.
const AUTO_REWRITE: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: rewrite
  annotations:
    kubernetes.io/ingress.class: qcloud
    ingress.cloud.tencent.com/auto-rewrite: "true"
    ingress.cloud.tencent.com/auto-rewrite-code: '{"defaultRewriteCode":301,"rewriteCodeInfos":[{"host":"b.example.com","rewriteCode":307}]}'
spec:
  tls:
  - hosts: [a.example.com, b.example.com]
    secretName: cert
  rules:
  - host: a.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
  - host: b.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#;

#[test]
fn auto_rewrite_redirects_http_to_https_with_the_per_host_code_keeping_path_and_query() {
    let compiled = compile_tke(AUTO_REWRITE);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/p/q?x=1"),
        "301 https://a.example.com/p/q?x=1"
    );
    assert_eq!(
        answer(&compiled, PLAIN, "b.example.com", "/"),
        "307 https://b.example.com/"
    );
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/p"), WEB);
}

#[test]
fn auto_rewrite_without_a_code_uses_the_flag_default() {
    let no_code: String = AUTO_REWRITE
        .lines()
        .filter(|line| !line.contains("auto-rewrite-code"))
        .collect::<Vec<_>>()
        .join("\n");
    let compiled = compile_tke(&no_code);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/"),
        "302 https://a.example.com/"
    );
    let mut options = mk_options();
    options.shadow.default_rewrite_code = 301;
    let compiled = compile(&mk_state(&no_code), &options);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/"),
        "301 https://a.example.com/"
    );
}

#[test]
fn a_rewrite_entry_redirects_to_its_target_when_rewrite_support_is_on() {
    let manifest = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: moved
  annotations:
    kubernetes.io/ingress.class: qcloud
    kubernetes.io/ingress.rule-mix: "true"
    ingress.cloud.tencent.com/rewrite-support: "true"
    kubernetes.io/ingress.http-rules: '[{"host":"old.example.com","path":"/old","rewrite":{"port":443,"host":"new.example.com","path":"/new"}},{"host":"old.example.com","path":"/","backend":{"serviceName":"web","servicePort":"80"}}]'
spec:
  rules:
  - host: old.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#;
    let compiled = compile_tke(manifest);
    assert_eq!(
        answer(&compiled, PLAIN, "old.example.com", "/old?k=v"),
        "302 https://new.example.com/new?k=v"
    );
    assert_eq!(answer(&compiled, PLAIN, "old.example.com", "/other"), WEB);
    assert_eq!(verdict(&compiled, "old.example.com").verdict, Verdict::Identical);

    let unsupported = compile_tke(&manifest.replace("rewrite-support: \"true\"", "rewrite-support: \"false\""));
    assert_eq!(reasons(&unsupported, "old.example.com"), ["UnsupportedAnnotation"]);
}

/// Two `rewrite` entries as `http-rules` writes them, the first `A`, the second `B`.
fn mk_rewrites(a: &str, b: &str) -> String {
    format!(
        r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: moved
  annotations:
    kubernetes.io/ingress.class: qcloud
    kubernetes.io/ingress.rule-mix: "true"
    ingress.cloud.tencent.com/rewrite-support: "true"
    kubernetes.io/ingress.http-rules: '[{a},{b},{{"host":"old.example.com","path":"/","backend":{{"serviceName":"web","servicePort":"80"}}}}]'
spec:
  rules:
  - host: old.example.com
    http:
      paths:
      - {{path: /, pathType: ImplementationSpecific, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
"#
    )
}

#[test]
fn redirects_the_clb_refuses_to_set_up_refuse_the_hosts() {
    let to = |host: &str, path: &str, port: u16| {
        format!(
            r#"{{"host":"old.example.com","path":"{path}","rewrite":{{"port":{port},"host":"{host}","path":"/x"}}}}"#
        )
    };
    let twice = mk_rewrites(&to("a.example.com", "/old", 443), &to("b.example.com", "/old", 443));
    let chained = mk_rewrites(&to("old.example.com", "/old", 80), &to("b.example.com", "/x", 443));
    let itself = mk_rewrites(&to("old.example.com", "/x", 80), &to("b.example.com", "/y", 443));
    let fine = mk_rewrites(&to("a.example.com", "/old", 443), &to("b.example.com", "/y", 443));
    for (manifest, says) in [
        (twice, "old.example.com:80/old redirected to two targets"),
        (chained, "old.example.com:80/x, which is redirected itself"),
        (itself, "redirect of old.example.com:80/x to itself"),
    ] {
        let compiled = compile_tke(&manifest);
        let verdict = verdict(&compiled, "old.example.com");
        assert!(
            verdict
                .reasons
                .iter()
                .any(|r| r.starts_with("TkeRejects: ") && r.contains(says)),
            "{says}: {verdict:?}"
        );
    }
    assert_eq!(
        verdict(&compile_tke(&fine), "old.example.com").verdict,
        Verdict::Identical
    );
}
