//! The qcloud profile rule by rule, from manifests shaped like TKE's documented examples: each
//! test compiles them, builds the proxy's real table, and asks it what a request gets.

use std::{collections::BTreeMap, path::Path, sync::Arc};

use k8s_openapi::{ByteString, api::core::v1::Secret};
use shunt_proxy::{
    metrics::RouteStats,
    redirect,
    routes::{RouteTable, spec::HostMatch},
    upstream::Upstream,
};

use super::*;
use crate::{
    compile::{ClusterState, CompileOptions, Compiled, compile},
    fixtures::mk_meta,
    manifests::parse_documents,
    shadow::{Verdict, dns_refusals},
};

/// The Services every example routes to, in namespace `shop`.
const SERVICES: &str = r#"
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: api}
spec: {ports: [{name: http, port: 80}]}
"#;

const WEB: &str = "shop/web:80";
const API: &str = "shop/api:80";

fn mk_state(ingresses: &str) -> ClusterState {
    let text = format!("{SERVICES}\n---\n{ingresses}");
    ClusterState::from_objects(parse_documents(&text, Path::new("tke.yaml")).expect("valid manifests"))
}

fn mk_options() -> CompileOptions {
    CompileOptions {
        shadow_classes: vec!["qcloud".into()],
        ..CompileOptions::default()
    }
}

fn compile_tke(ingresses: &str) -> Compiled {
    compile(&mk_state(ingresses), &mk_options())
}

/// What a request gets: the backend id, `CODE LOCATION` for a redirect, or `404`.
fn answer(compiled: &Compiled, tls: bool, host: &str, path_and_query: &str) -> String {
    let (table, warnings) = RouteTable::build(
        Arc::new(compiled.table.clone()),
        |id| Arc::new(Upstream::new(id, Default::default(), vec![], Default::default())),
        |_, _| RouteStats::detached(),
    );
    assert_eq!(warnings, vec![]);
    let target: http::uri::PathAndQuery = path_and_query.parse().expect("a valid path");
    match table.lookup_on(host, target.path(), tls) {
        None => "404".to_string(),
        Some(route) => match &route.redirect {
            Some(to) => format!("{} {}", to.code, redirect::location(to, tls, host, &target)),
            None => route.upstream.id.to_string(),
        },
    }
}

fn verdict<'c>(compiled: &'c Compiled, host: &str) -> &'c HostVerdict {
    compiled
        .shadow
        .iter()
        .find(|v| v.host == host)
        .unwrap_or_else(|| panic!("no verdict for {host}: {:?}", compiled.shadow))
}

/// The reason names (before `:`) of a host's verdict.
fn reasons(compiled: &Compiled, host: &str) -> Vec<String> {
    let verdict = verdict(compiled, host);
    verdict
        .reasons
        .iter()
        .map(|r| r.split(':').next().unwrap_or_default().to_string())
        .collect()
}

const PLAIN: bool = false;
const TLS: bool = true;

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

/// A `kubernetes.io/tls` Secret for `names`, PEM in `data` as the API server returns it.
fn mk_tls_secret(name: &str, names: &[&str]) -> Secret {
    let key = rcgen::KeyPair::generate().expect("a key");
    let mut params =
        rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("valid names");
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(2040, 1, 1);
    let cert = params.self_signed(&key).expect("a certificate");
    let data = [("tls.crt", cert.pem()), ("tls.key", key.serialize_pem())]
        .map(|(k, v)| (k.to_string(), ByteString(v.into_bytes())));
    Secret {
        metadata: mk_meta("shop", name),
        type_: Some("kubernetes.io/tls".into()),
        data: Some(BTreeMap::from(data)),
        ..Default::default()
    }
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
    assert_eq!((verdict.verdict, verdict.reasons.clone()), (Verdict::Identical, vec![]));
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

#[test]
fn rule_mix_puts_each_rule_on_the_listeners_its_annotations_name() {
    let mut state = mk_state(RULE_MIX);
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
    let refusals = dns_refusals(&compiled.shadow, false);
    assert!(
        refusals
            .iter()
            .any(|(host, why)| host == &HostMatch::Exact("paths.example.com".into())
                && why.starts_with("AmbiguousLoadBalancer"))
    );
    assert!(dns_refusals(&compiled.shadow, true).is_empty(), "--shadow-rewrite=all");
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
        r#"annotations: {kubernetes.io/ingress.class: qcloud, ingress.cloud.tencent.com/listen-ports: '[{"HTTP":80},{"HTTP":8080}]', ingress.cloud.tencent.com/direct-access: "true"}"#,
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

mod properties {
    //! The annotation parsers and the protocol split take anything a user can write without
    //! panicking, and a refused parse always refuses the Ingress's hosts.

    use proptest::prelude::*;

    use super::*;

    /// Annotation values: JSON-ish fragments, the documented shapes, and arbitrary text.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            Just("null".to_string()),
            Just("true".to_string()),
            r#"\[\{"(host|path|backend|rewrite)":("[a-z./*]{0,12}"|\{"serviceName":"[a-z]{0,4}","servicePort":("[0-9a-z]{0,5}"|[0-9]{1,6})\}|\{"port":[0-9]{1,6}\}|null|[0-9]{1,4})\}\]"#,
            r#"\{"defaultRewriteCode":[0-9]{1,4},"rewriteCodeInfos":\[\{"host":"[a-z.]{0,8}","rewriteCode":[0-9]{1,4}\}\]\}"#,
            r#"\[\{"(HTTP|HTTPS|TCP)":[0-9]{1,6}\}\]"#,
        ]
    }

    const KEYS: [&str; 9] = [
        "kubernetes.io/ingress.rule-mix",
        "kubernetes.io/ingress.rule-mix-both",
        "kubernetes.io/ingress.http-rules",
        "kubernetes.io/ingress.https-rules",
        "ingress.cloud.tencent.com/auto-rewrite",
        "ingress.cloud.tencent.com/auto-rewrite-code",
        "ingress.cloud.tencent.com/rewrite-support",
        "ingress.cloud.tencent.com/listen-ports",
        "ingress.cloud.tencent.com/enable-group",
    ];

    proptest! {
        #[test]
        fn any_annotation_values_compile_without_panicking(values in proptest::collection::vec(value(), KEYS.len())) {
            let annotations: String = KEYS
                .iter()
                .zip(&values)
                .map(|(key, value)| format!("    {key}: {}\n", serde_json::to_string(value).expect("a JSON string")))
                .collect();
            let manifest = format!(
                "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  namespace: shop\n  name: fuzz\n  annotations:\n    kubernetes.io/ingress.class: qcloud\n{annotations}spec:\n  rules:\n  - host: fuzz.example.com\n    http:\n      paths:\n      - {{path: /, pathType: ImplementationSpecific, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
            );
            let compiled = compile_tke(&manifest);
            let invalid = compiled.diagnostics.iter().any(|d| d.reason == Reason::InvalidAnnotation);
            if invalid {
                let verdict = verdict(&compiled, "fuzz.example.com");
                prop_assert_eq!(verdict.verdict, Verdict::Refused);
            }
        }

        #[test]
        fn any_rewrite_code_json_is_parsed_or_reported(text in value()) {
            let mut ingress = k8s_openapi::api::networking::v1::Ingress::default();
            ingress.metadata.annotations = Some(BTreeMap::from([
                ("ingress.cloud.tencent.com/auto-rewrite-code".to_string(), text.clone()),
                ("ingress.cloud.tencent.com/listen-ports".to_string(), text),
            ]));
            let parsed = annotations::parse(&ingress);
            for code in parsed.rewrite_codes.default.into_iter().chain(parsed.rewrite_codes.hosts.values().copied()) {
                prop_assert!(annotations::REWRITE_CODES.contains(&code));
            }
        }
    }
}
