//! Paths and hosts as the CLB matches them, verdicts per host, and which classes are qcloud.

use super::*;

const PATHS: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: paths
  annotations: {kubernetes.io/ingress.class: qcloud}
spec:
  rules:
  - host: paths.example.com
    http:
      paths:
      - {path: /foo, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /abc/, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /exact, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}
  - host: "*.example.com"
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
  - http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
"#;

#[test]
fn a_path_is_a_character_prefix_so_foo_matches_foobar() {
    let compiled = compile_tke(PATHS);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/foobar"), API);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/foo/x"), API);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/exact"), WEB);
    assert_eq!(
        answer(&compiled, PLAIN, "paths.example.com", "/exactly"),
        "404",
        "Exact is nginx's ="
    );
}

#[test]
fn a_rule_with_a_trailing_slash_answers_the_bare_path_with_301() {
    let compiled = compile_tke(PATHS);
    assert_eq!(
        answer(&compiled, PLAIN, "paths.example.com", "/abc?q=1"),
        "301 http://paths.example.com/abc/?q=1"
    );
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/abc/x"), WEB);
}

#[test]
fn a_known_host_answers_404_for_paths_it_lacks() {
    let compiled = compile_tke(PATHS);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/nothing"), "404");
}

#[test]
fn a_wildcard_matches_any_number_of_labels_and_an_exact_host_beats_it() {
    let compiled = compile_tke(PATHS);
    assert_eq!(answer(&compiled, PLAIN, "a.b.example.com", "/x"), WEB);
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/x"), WEB);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/foo"), API);
    assert_eq!(
        verdict(&compiled, "*.example.com").matched,
        HostMatch::DeepWildcard("example.com".into())
    );
}

#[test]
fn an_unknown_host_falls_to_the_default_domain() {
    let compiled = compile_tke(PATHS);
    assert_eq!(answer(&compiled, PLAIN, "elsewhere.org", "/anything"), API);
}

#[test]
fn two_qcloud_ingresses_claiming_one_host_are_both_refused_as_ambiguous() {
    let one = PATHS.replace("name: paths", "name: first");
    let two = PATHS.replace("name: paths", "name: second");
    let compiled = compile_tke(&format!("{one}\n---\n{two}"));
    let verdict = verdict(&compiled, "paths.example.com");
    assert_eq!(verdict.verdict, Verdict::Refused);
    assert_eq!(verdict.ingresses, ["shop/first", "shop/second"]);
    assert_eq!(reasons(&compiled, "paths.example.com"), ["AmbiguousLoadBalancer"]);
    let refusals = dns_refusals(&compiled.shadow, ShadowRewrite::Refused);
    assert!(refusals.iter().any(|refusal| refusal.host == HostMatch::Exact("paths.example.com".into())
        && matches!(&refusal.reason, RefusalReason::Other { detail, .. } if detail.starts_with("AmbiguousLoadBalancer"))));
    assert!(
        dns_refusals(&compiled.shadow, ShadowRewrite::All).is_empty(),
        "--shadow-rewrite=all"
    );
}

#[test]
fn grouped_ingresses_on_one_load_balancer_are_not_ambiguous() {
    let grouped = |name: &str| {
        PATHS.replace("name: paths", &format!("name: {name}")).replace(
            "annotations: {kubernetes.io/ingress.class: qcloud}",
            "annotations: {kubernetes.io/ingress.class: qcloud, ingress.cloud.tencent.com/enable-group: \"true\", kubernetes.io/ingress.existLbId: lb-1}",
        )
    };
    let compiled = compile_tke(&format!("{}\n---\n{}", grouped("first"), grouped("second")));
    assert_eq!(verdict(&compiled, "paths.example.com").verdict, Verdict::Identical);
}

#[test]
fn extra_listen_ports_and_unsupported_annotations_refuse_the_hosts() {
    let ports = PATHS.replace(
        "annotations: {kubernetes.io/ingress.class: qcloud}",
        r#"annotations: {kubernetes.io/ingress.class: qcloud, ingress.cloud.tencent.com/listen-ports: '[{"HTTP":80},{"HTTP":8080}]', ingress.cloud.tencent.com/mode: skip}"#,
    );
    let compiled = compile_tke(&ports);
    assert_eq!(
        reasons(&compiled, "paths.example.com"),
        ["ListenPortNotServed", "UnsupportedAnnotation"]
    );
}

#[test]
fn an_annotation_that_does_not_parse_refuses_the_hosts_and_is_reported() {
    let bad = PATHS.replace(
        "annotations: {kubernetes.io/ingress.class: qcloud}",
        r#"annotations: {kubernetes.io/ingress.class: qcloud, ingress.cloud.tencent.com/auto-rewrite-code: '{"defaultRewriteCode":308}'}"#,
    );
    let compiled = compile_tke(&bad);
    assert_eq!(reasons(&compiled, "paths.example.com"), ["InvalidAnnotation"]);
    assert!(
        compiled
            .diagnostics
            .iter()
            .any(|d| d.reason == Reason::InvalidAnnotation && d.message.contains("308"))
    );
}

#[test]
fn forwarded_requests_carry_the_client_protocol_header() {
    let compiled = compile_tke(PATHS);
    let headers: Vec<_> = compiled
        .table
        .hosts
        .iter()
        .flat_map(|vhost| &vhost.paths)
        .map(|path| path.options.client_protocol_header.as_deref())
        .collect();
    assert!(!headers.is_empty());
    assert!(headers.iter().all(|h| *h == Some(CLIENT_PROTO_HEADER)));
}

#[test]
fn class_less_ingresses_are_qcloud_when_qcloud_is_shadowed_and_other_classes_opt_in_by_name() {
    let class_less = PATHS.replace("annotations: {kubernetes.io/ingress.class: qcloud}", "annotations: {}");
    let compiled = compile_tke(&class_less);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/foobar"), API);

    let custom = PATHS.replace(
        "kubernetes.io/ingress.class: qcloud",
        "kubernetes.io/ingress.class: clb",
    );
    let opted_in = CompileOptions {
        shadow_classes: vec!["clb=qcloud".parse().expect("a valid class")],
        ..CompileOptions::default()
    };
    let compiled = compile(&mk_state(&custom), &opted_in);
    assert_eq!(answer(&compiled, PLAIN, "paths.example.com", "/foobar"), API);

    let spec_semantics = CompileOptions {
        shadow_classes: vec!["clb".into()],
        ..CompileOptions::default()
    };
    let compiled = compile(&mk_state(&custom), &spec_semantics);
    assert!(compiled.shadow.is_empty());
    assert!(!compiled.table.documents.contains_key("shadow"));
    assert_eq!(
        answer(&compiled, PLAIN, "paths.example.com", "/foobar"),
        WEB,
        "Ingress-spec: /foo is a segment prefix, so the one-label wildcard answers"
    );
}
