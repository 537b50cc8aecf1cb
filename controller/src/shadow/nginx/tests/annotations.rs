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
        "kubernetes.io/tls-acme: \"true\"",
    ] {
        assert_eq!(refused_for(entry), Vec::<String>::new(), "{entry}");
    }
}

#[test]
fn annotations_shunt_does_not_reproduce_refuse_the_host_naming_the_key() {
    for key in [
        "auth-url",
        "auth-signin",
        "limit-rps",
        "mirror-uri",
        "auth-tls-secret",
        "ssl-passthrough",
        "global-rate-limit",
        "proxy-redirect-from",
        "proxy-cookie-path",
        "custom-http-errors",
        "default-backend",
        "affinity",
        "from-to-www-redirect",
        "a-key-nobody-knows",
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
        ("backend-protocol: HTTPS", "UnsupportedAnnotation"),
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
fn spec_default_backend_refuses_the_ingresss_hosts() {
    let spec = format!(
        "defaultBackend: {{service: {{name: api, port: {{number: 80}}}}}}\n{}",
        mk_rule("a.example.com", &[("/", "Prefix")])
    );
    let compiled = compile_nginx(&[mk_ingress("a", "", &spec)]);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        ["UnsupportedField: spec.defaultBackend"]
    );
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
