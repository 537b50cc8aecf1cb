//! The annotation table: reproduced, no effect on the answer, refused with the key named.

use super::*;

/// The refusals of a host whose one Ingress carries `annotations` (YAML map entries).
fn refused_for(annotations: &str) -> Vec<String> {
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        annotations,
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )]);
    refusals(&compiled, "a.example.com")
}

#[test]
fn annotations_that_change_nothing_a_caller_sees_are_accepted() {
    for entry in [
        "nginx.ingress.kubernetes.io/proxy-buffering: \"off\"",
        "nginx.ingress.kubernetes.io/proxy-buffer-size: 16k",
        "nginx.ingress.kubernetes.io/proxy-http-version: \"1.1\"",
        "nginx.ingress.kubernetes.io/enable-access-log: \"false\"",
        "nginx.ingress.kubernetes.io/load-balance: ewma",
        "nginx.ingress.kubernetes.io/service-upstream: \"true\"",
        "nginx.ingress.kubernetes.io/whitelist-source-range: 0.0.0.0/0,::/0",
        "nginx.ingress.kubernetes.io/allowlist-source-range: \"::/0, 0.0.0.0/0\"",
        "nginx.ingress.kubernetes.io/ssl-redirect: \"false\"",
        "nginx.ingress.kubernetes.io/backend-protocol: GRPC",
        "nginx.ingress.kubernetes.io/backend-protocol: HTTPS",
        "kubernetes.io/tls-acme: \"true\"",
    ] {
        assert_eq!(refused_for(entry), Vec::<String>::new(), "{entry}");
    }
}

#[test]
fn annotations_shunt_does_not_reproduce_refuse_the_host_naming_the_key() {
    for key in [
        "auth-type",
        "auth-realm",
        "auth-tls-secret",
        "ssl-passthrough",
        "proxy-redirect-from",
        "proxy-cookie-path",
        "mirror-target",
    ] {
        let refused = refused_for(&format!("nginx.ingress.kubernetes.io/{key}: \"x\""));
        assert_eq!(
            refused,
            [format!("UnsupportedAnnotation: nginx.ingress.kubernetes.io/{key}")],
            "{key}"
        );
    }
}

#[test]
fn values_that_narrow_or_do_not_parse_are_refused_too() {
    let cases = [
        ("whitelist-source-range: 10.0.0.0/8", "UnsupportedAnnotation"),
        ("whitelist-source-range: 0.0.0.0/0", "UnsupportedAnnotation"),
        ("denylist-source-range: 192.168.0.0/16", "UnsupportedAnnotation"),
        ("allowlist-source-range: 203.0.113.0/24,office", "InvalidAnnotation"),
        ("proxy-http-version: \"1.0\"", "UnsupportedAnnotation"),
        ("backend-protocol: FCGI", "UnsupportedAnnotation"),
        ("backend-protocol: SOAP", "InvalidAnnotation"),
        ("ssl-redirect: \"yes\"", "InvalidAnnotation"),
    ];
    for (entry, reason) in cases {
        let (key, _) = entry.split_once(':').expect("an entry");
        assert_eq!(
            refused_for(&format!("nginx.ingress.kubernetes.io/{entry}")),
            [format!("{reason}: nginx.ingress.kubernetes.io/{key}")],
            "{entry}"
        );
    }
}

#[test]
fn keys_no_nginx_parser_reads_refuse_nothing_and_are_listed_beside_the_no_effect_keys() {
    let annotations = [
        "nginx.ingress.kubernetes.io/rate-limit: \"10\"",
        "nginx.ingress.kubernetes.io/websocket-services: web",
        "nginx.ingress.kubernetes.io/a-key-nobody-knows: x",
        "nginx.ingress.kubernetes.io/proxy-buffering: \"on\"",
        "kubernetes.io/tls-acme: \"true\"",
    ];
    let compiled = compile_nginx(&[
        mk_ingress(
            "a",
            &annotations.join("\n"),
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        ),
        mk_ingress(
            "b",
            "nginx.ingress.kubernetes.io/rate-limit-window: 1m",
            &mk_rule("a.example.com", &[("/b", "Prefix")]),
        ),
    ]);
    let verdict = verdict(&compiled, "a.example.com");
    assert_eq!(verdict.verdict, Verdict::Identical, "{:?}", verdict.reasons);
    assert_eq!(
        verdict.ignored,
        [
            "nginx.ingress.kubernetes.io/a-key-nobody-knows",
            "nginx.ingress.kubernetes.io/rate-limit",
            "nginx.ingress.kubernetes.io/rate-limit-window",
            "nginx.ingress.kubernetes.io/websocket-services",
        ]
    );
    assert_eq!(verdict.no_effect, ["nginx.ingress.kubernetes.io/proxy-buffering"]);
    let json = serde_json::to_value(verdict).expect("a verdict serialises");
    assert_eq!(json["ignored"].as_array().map(Vec::len), Some(4));
    assert_eq!(json["noEffect"][0], "nginx.ingress.kubernetes.io/proxy-buffering");
}

#[test]
fn every_no_effect_key_is_one_nginx_reads() {
    for key in crate::shadow::nginx::annotations::NO_EFFECT {
        let compiled = compile_nginx(&[mk_ingress(
            "a",
            &format!("nginx.ingress.kubernetes.io/{key}: x"),
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        )]);
        assert_eq!(
            verdict(&compiled, "a.example.com").ignored,
            Vec::<String>::new(),
            "{key}"
        );
    }
}

/// The refusals of a host whose Ingress has a default backend beside `rules`.
fn default_backend_refusals(rules: &str) -> Vec<String> {
    let spec = format!("defaultBackend: {{service: {{name: api, port: {{number: 80}}}}}}\n{rules}");
    refusals(&compile_nginx(&[mk_ingress("a", "", &spec)]), "a.example.com")
}

#[test]
fn spec_default_backend_refuses_the_hosts_whose_root_it_answers() {
    let refused = ["UnsupportedField: spec.defaultBackend"];
    assert_eq!(
        default_backend_refusals(&mk_rule("a.example.com", &[("/api", "Prefix")])),
        refused
    );
    assert_eq!(
        default_backend_refusals(&mk_rule("a.example.com", &[("/", "Exact")])),
        refused
    );
    // A second rule without `/` keeps the default backend answering on its host's root.
    let two = format!(
        "{}{}",
        mk_rule("a.example.com", &[("/", "Prefix")]),
        mk_rule("b.example.com", &[("/b", "Prefix")]).replace("rules:\n", "")
    );
    assert_eq!(default_backend_refusals(&two), refused);
}

#[test]
fn spec_default_backend_behind_a_root_path_on_every_rule_changes_nothing() {
    for kind in ["Prefix", "ImplementationSpecific"] {
        let rules = mk_rule("a.example.com", &[("/api", "Exact"), ("/", kind)]);
        assert_eq!(default_backend_refusals(&rules), Vec::<String>::new(), "{kind}");
    }
}

#[test]
fn hosts_with_a_certificate_redirect_plain_http_with_308_unless_told_not_to() {
    let tls = |host: &str| {
        format!(
            "tls:\n- hosts: [{host}]\n  secretName: cert\n{}",
            mk_rule(host, &[("/", "Prefix")])
        )
    };
    let compiled = compile_nginx(&[
        mk_ingress("a", "", &tls("a.example.com")),
        mk_ingress(
            "b",
            "nginx.ingress.kubernetes.io/ssl-redirect: \"false\"",
            &tls("b.example.com"),
        ),
        mk_ingress("c", "", &mk_rule("c.example.com", &[("/", "Prefix")])),
        mk_ingress(
            "d",
            "nginx.ingress.kubernetes.io/force-ssl-redirect: \"true\"",
            &mk_rule("d.example.com", &[("/", "Prefix")]),
        ),
    ]);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/p?q=1"),
        "308 https://a.example.com/p?q=1"
    );
    assert_eq!(answer(&compiled, PLAIN, "b.example.com", "/p"), WEB);
    assert_eq!(answer(&compiled, PLAIN, "c.example.com", "/p"), WEB);
    assert_eq!(
        answer(&compiled, PLAIN, "d.example.com", "/p"),
        "308 https://d.example.com/p"
    );
    assert_eq!(verdict(&compiled, "a.example.com").listeners, ["http", "https"]);
    assert_eq!(verdict(&compiled, "c.example.com").listeners, ["http"]);
}

#[test]
fn backend_protocol_https_grpcs_and_auto_http_speak_tls_to_the_pod() {
    let values = [
        ("HTTPS", "https"),
        ("grpcs", "h2-tls"),
        ("GRPCS", "h2-tls"),
        ("AUTO_HTTP", "auto-http"),
    ];
    for (value, protocol) in values {
        let compiled = compile_nginx(&[mk_ingress(
            "a",
            &format!("nginx.ingress.kubernetes.io/backend-protocol: {value}"),
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        )]);
        assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new(), "{value}");
        assert_eq!(
            answer(&compiled, PLAIN, "a.example.com", "/"),
            format!("{WEB}@{protocol}")
        );
    }
}

#[test]
fn grpcs_keeps_grpc_s_refusal_of_a_send_timeout_shunt_does_not_keep() {
    let annotations = "nginx.ingress.kubernetes.io/backend-protocol: GRPCS\n\
                       nginx.ingress.kubernetes.io/proxy-send-timeout: \"120\"";
    assert_eq!(
        refused_for(annotations),
        ["UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-send-timeout"]
    );
}

#[test]
fn proxy_ssl_keys_without_the_secret_change_nothing_and_are_listed() {
    // proxyssl/main.go's Parse returns at the missing secret: no proxy_ssl_* directive.
    let annotations = [
        "nginx.ingress.kubernetes.io/backend-protocol: HTTPS",
        "nginx.ingress.kubernetes.io/proxy-ssl-verify: \"on\"",
        "nginx.ingress.kubernetes.io/proxy-ssl-name: pod.cluster.internal",
        "nginx.ingress.kubernetes.io/proxy-ssl-server-name: \"on\"",
        "nginx.ingress.kubernetes.io/proxy-ssl-protocols: TLSv1.3",
    ];
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        &annotations.join("\n"),
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )]);
    let verdict = verdict(&compiled, "a.example.com");
    assert_eq!(verdict.verdict, Verdict::Identical, "{:?}", verdict.reasons);
    assert_eq!(
        verdict.no_effect,
        [
            "nginx.ingress.kubernetes.io/proxy-ssl-name",
            "nginx.ingress.kubernetes.io/proxy-ssl-protocols",
            "nginx.ingress.kubernetes.io/proxy-ssl-server-name",
            "nginx.ingress.kubernetes.io/proxy-ssl-verify",
        ]
    );
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/"), format!("{WEB}@https"));
}
