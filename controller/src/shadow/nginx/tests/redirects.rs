//! Redirects an nginx Ingress answers with: the HTTPS redirect's code and trailing slash,
//! `permanent-redirect`, `temporal-redirect`, `app-root`.

use super::*;

fn mk_config_map(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{namespace: ingress-nginx, name: ingress-nginx-controller}}\ndata:\n{}",
        indent(data, 2)
    )
}

fn tls_ingress(name: &str, annotations: &str, paths: &[(&str, &str)]) -> String {
    let spec = format!(
        "tls:\n- hosts: [a.example.com]\n  secretName: cert\n{}",
        mk_rule("a.example.com", paths)
    );
    mk_ingress(name, annotations, &spec)
}

#[test]
fn the_https_redirect_drops_one_trailing_slash_unless_told_to_keep_it() {
    let compiled = compile_nginx(&[tls_ingress("a", "", &[("/", "Prefix")])]);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/docs/"),
        "308 https://a.example.com/docs"
    );
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/?q=/"),
        "308 https://a.example.com/?q="
    );
    let keep = compile_nginx(&[tls_ingress(
        "a",
        "nginx.ingress.kubernetes.io/preserve-trailing-slash: \"true\"",
        &[("/", "Prefix")],
    )]);
    assert_eq!(
        answer(&keep, PLAIN, "a.example.com", "/docs/"),
        "308 https://a.example.com/docs/"
    );
}

#[test]
fn the_configmaps_redirect_code_is_used_and_an_invalid_one_keeps_308() {
    for (code, expected) in [("301", "301"), ("307", "307"), ("303", "308"), ("moved", "308")] {
        let compiled = compile_nginx(&[
            tls_ingress("a", "", &[("/", "Prefix")]),
            mk_config_map(&format!("http-redirect-code: \"{code}\"")),
        ]);
        assert_eq!(
            answer(&compiled, PLAIN, "a.example.com", "/x"),
            format!("{expected} https://a.example.com/x"),
            "{code}"
        );
        assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    }
}

#[test]
fn permanent_and_temporal_redirects_answer_every_path_verbatim_before_the_https_redirect() {
    let permanent = "nginx.ingress.kubernetes.io/permanent-redirect: https://new.example.com/landing";
    let compiled = compile_nginx(&[tls_ingress("a", permanent, &[("/", "Prefix")])]);
    for tls in [PLAIN, TLS] {
        assert_eq!(
            answer(&compiled, tls, "a.example.com", "/x?q=1"),
            "301 https://new.example.com/landing"
        );
    }
    let with_code = format!("{permanent}\nnginx.ingress.kubernetes.io/permanent-redirect-code: \"308\"");
    let compiled = compile_nginx(&[tls_ingress("a", &with_code, &[("/", "Prefix")])]);
    assert_eq!(
        answer(&compiled, TLS, "a.example.com", "/"),
        "308 https://new.example.com/landing"
    );
    // Out of range: the default, as redirect.go falls back.
    let out_of_range = format!("{permanent}\nnginx.ingress.kubernetes.io/permanent-redirect-code: \"404\"");
    let compiled = compile_nginx(&[tls_ingress("a", &out_of_range, &[("/", "Prefix")])]);
    assert_eq!(
        answer(&compiled, TLS, "a.example.com", "/"),
        "301 https://new.example.com/landing"
    );
    let both = format!("{permanent}\nnginx.ingress.kubernetes.io/temporal-redirect: http://tmp.example.com/");
    let compiled = compile_nginx(&[tls_ingress("a", &both, &[("/", "Prefix")])]);
    assert_eq!(
        answer(&compiled, TLS, "a.example.com", "/"),
        "302 http://tmp.example.com/"
    );
}

#[test]
fn redirect_urls_nginx_would_expand_or_not_send_as_location_are_refused() {
    for (annotations, key) in [
        (
            "nginx.ingress.kubernetes.io/permanent-redirect: https://new.example.com$request_uri",
            "permanent-redirect",
        ),
        (
            "nginx.ingress.kubernetes.io/permanent-redirect: ftp://new.example.com/",
            "permanent-redirect",
        ),
        (
            "nginx.ingress.kubernetes.io/permanent-redirect: https://n.example/\nnginx.ingress.kubernetes.io/permanent-redirect-code: \"300\"",
            "permanent-redirect",
        ),
        (
            "nginx.ingress.kubernetes.io/temporal-redirect: https://n.example/\nnginx.ingress.kubernetes.io/temporal-redirect-code: soon",
            "temporal-redirect-code",
        ),
    ] {
        let compiled = compile_nginx(&[tls_ingress("a", annotations, &[("/", "Prefix")])]);
        let refusal = refusals(&compiled, "a.example.com");
        assert_eq!(refusal.len(), 1, "{annotations}: {refusal:?}");
        assert!(
            refusal[0].ends_with(&format!("nginx.ingress.kubernetes.io/{key}")),
            "{refusal:?}"
        );
    }
}

#[test]
fn app_root_redirects_only_the_root_of_every_ingress_on_the_host_without_the_query() {
    let docs = tls_ingress("docs", "", &[("/", "Prefix")]);
    let app = tls_ingress(
        "app",
        "nginx.ingress.kubernetes.io/app-root: /app1",
        &[("/app1", "Prefix")],
    );
    let compiled = compile_nginx(&[docs, app]);
    // Before the HTTPS redirect, and with the scheme and Host the request came with.
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/?x=1"),
        "302 http://a.example.com/app1"
    );
    assert_eq!(
        answer(&compiled, TLS, "a.example.com", "/"),
        "302 https://a.example.com/app1"
    );
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/other"), WEB);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    // Values ingress-nginx drops change nothing.
    let dropped = compile_nginx(&[tls_ingress(
        "app",
        "nginx.ingress.kubernetes.io/app-root: https://elsewhere/",
        &[("/", "Prefix")],
    )]);
    assert_eq!(answer(&dropped, TLS, "a.example.com", "/"), WEB);
}

#[test]
fn a_host_whose_secret_is_missing_is_not_redirected_as_ingress_nginx_has_no_certificate_for_it() {
    let missing = mk_ingress(
        "b",
        "",
        &format!(
            "tls:\n- hosts: [b.example.com]\n  secretName: absent\n{}",
            mk_rule("b.example.com", &[("/", "Prefix")])
        ),
    );
    let compiled = compile_nginx(&[missing]);
    // cert-manager's first HTTP-01 check comes before the Secret exists: served, as nginx does.
    assert_eq!(answer(&compiled, PLAIN, "b.example.com", "/x"), WEB);
    assert_eq!(verdict(&compiled, "b.example.com").verdict, Verdict::Identical);
}

#[test]
fn a_refused_host_is_not_routed_so_no_caller_skips_what_its_annotation_asks() {
    let guarded = mk_ingress(
        "admin",
        "nginx.ingress.kubernetes.io/auth-url: http://$host/check",
        &mk_rule("a.example.com", &[("/admin", "Prefix")]),
    );
    let open = mk_ingress("open", "", &mk_rule("a.example.com", &[("/", "Prefix")]));
    let hostless = mk_ingress(
        "hostless",
        "nginx.ingress.kubernetes.io/auth-url: http://$host/check",
        "rules:\n- http:\n    paths:\n    - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}",
    );
    let compiled = compile_nginx(&[guarded, open, hostless]);
    assert_eq!(verdict(&compiled, "a.example.com").verdict, Verdict::Refused);
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/admin"), "404");
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/"), "404");
    assert_eq!(answer(&compiled, PLAIN, "other.example.com", "/"), "404");
}

#[test]
fn a_rewrite_target_that_is_a_url_is_a_302_of_the_rewrite_before_the_https_redirect() {
    let compiled = compile_nginx(&[tls_ingress(
        "a",
        "nginx.ingress.kubernetes.io/rewrite-target: \"https://docs.example.com/$1\"",
        &[("/docs/(.*)", "ImplementationSpecific")],
    )]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let table = table(&compiled);
    let route = table
        .lookup_on("a.example.com", "/docs/x", PLAIN)
        .expect("the rewriting location");
    assert!(!route.ssl_redirect, "the rewrite's redirect comes first");
    let redirect = route.redirect.as_ref().expect("a redirect");
    assert_eq!((redirect.code, redirect.rewritten), (302, true));
    let location = route
        .rules
        .rewrite
        .as_ref()
        .and_then(|r| r.location("/docs/a/b", Some("q=1")));
    assert_eq!(
        location.expect("the pattern matches"),
        "https://docs.example.com/a/b?q=1"
    );
}
