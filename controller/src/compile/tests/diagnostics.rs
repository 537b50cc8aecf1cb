//! Every diagnostic reason, each time checking that the rest of the Ingress still compiled.

use k8s_openapi::api::networking::v1::{HTTPIngressPath, IngressBackend, IngressRule};

use super::*;

const HOST: &str = "shop.example.com";

/// Ingress `shop/a`: a good `/` → web on [`HOST`], then `bad` on the same host.
fn with_bad_path(bad: HTTPIngressPath) -> Compiled {
    with_bad_rule(mk_rule(HOST, vec![bad]))
}

/// Ingress `shop/a`: a good `/` → web on [`HOST`], then `bad`.
fn with_bad_rule(bad: IngressRule) -> Compiled {
    let ingress = mk_ingress("shop", "a", vec![mk_rule(HOST, vec![mk_prefix("/", "web", 80)]), bad]);
    compile_default(&world_with(vec![ingress]))
}

fn only_the_good_path() -> TableSpec {
    table(
        vec![(host(HOST), vec![prefix("/", WEB, "shop/a")])],
        vec![(WEB, web_pods())],
    )
}

/// Asserts the good path alone compiled and exactly one diagnostic came out.
fn assert_skipped(compiled: Compiled, reason: Reason, message: &str) {
    assert_eq!(compiled.diagnostics, vec![diagnostic("a", reason, message)]);
    assert_eq!(compiled.table, only_the_good_path());
    assert_eq!(compiled.served, vec![served("shop", "a")]);
}

fn bad_backend(backend: IngressBackend) -> HTTPIngressPath {
    mk_path("/bad", "Prefix", backend)
}

#[test]
fn a_missing_service_skips_its_path() {
    assert_skipped(
        with_bad_path(mk_prefix("/api", "nope", 80)),
        Reason::MissingService,
        r#"service "shop/nope" not found for path "/api" on host "shop.example.com""#,
    );
}

#[test]
fn a_service_in_another_namespace_is_missing() {
    let mut state = world_with(vec![mk_ingress(
        "blog",
        "a",
        vec![mk_rule("", vec![mk_prefix("/", "web", 80)])],
    )]);
    state.services.push(mk_service("other", "web", &[("http", 80)]).into());
    let compiled = compile_default(&state);
    assert_eq!(compiled.table, TableSpec::default());
    assert_eq!(
        compiled.diagnostics,
        vec![Diagnostic::new(
            "blog",
            "a",
            Reason::MissingService,
            r#"service "blog/web" not found for path "/" on any host"#.into(),
        )]
    );
}

#[test]
fn a_missing_service_port_skips_its_path() {
    assert_skipped(
        with_bad_path(mk_prefix("/api", "web", 8080)),
        Reason::MissingServicePort,
        r#"service "shop/web" has no TCP port 8080 for path "/api" on host "shop.example.com""#,
    );
    assert_skipped(
        with_bad_path(mk_prefix("/api", "web", "grpc")),
        Reason::MissingServicePort,
        r#"service "shop/web" has no TCP port named "grpc" for path "/api" on host "shop.example.com""#,
    );
}

#[test]
fn a_service_without_spec_has_no_ports() {
    let mut state = world_with(vec![mk_ingress(
        "shop",
        "a",
        vec![mk_rule(HOST, vec![mk_prefix("/", "web", 80)])],
    )]);
    Arc::make_mut(&mut state.services[0]).spec = None;
    let compiled = compile_default(&state);
    assert_eq!(compiled.table, TableSpec::default());
    assert_eq!(
        compiled.diagnostics.iter().map(|d| d.reason).collect::<Vec<_>>(),
        vec![Reason::MissingServicePort]
    );
}

#[test]
fn an_externalname_service_skips_its_path() {
    let ingress = mk_ingress(
        "shop",
        "a",
        vec![mk_rule(
            HOST,
            vec![mk_prefix("/", "web", 80), mk_prefix("/ext", "ext", 80)],
        )],
    );
    let mut external = mk_service("shop", "ext", &[("http", 80)]);
    external.spec.as_mut().expect("fixture has a spec").type_ = Some("ExternalName".into());
    let mut state = world_with(vec![ingress]);
    state.services.push(external.into());
    let compiled = compile_default(&state);
    assert_skipped(
        compiled,
        Reason::ExternalNameService,
        r#"service "shop/ext" is of type ExternalName, which has no endpoints to proxy to for path "/ext" on host "shop.example.com""#,
    );
}

#[test]
fn a_resource_backend_skips_its_path() {
    assert_skipped(
        with_bad_path(bad_backend(mk_resource_backend("StorageBucket", "assets"))),
        Reason::ResourceBackend,
        r#"resource backend StorageBucket "assets" is not supported for path "/bad" on host "shop.example.com""#,
    );
}

#[test]
fn a_backend_naming_nothing_skips_its_path() {
    assert_skipped(
        with_bad_path(bad_backend(IngressBackend::default())),
        Reason::MissingBackend,
        r#"backend names no service for path "/bad" on host "shop.example.com""#,
    );
}

#[test]
fn a_service_backend_without_a_usable_port_skips_its_path() {
    let mut no_port = mk_backend("web", 80);
    no_port.service.as_mut().expect("fixture has a service").port = None;
    let mut both = mk_backend("web", 80);
    both.service
        .as_mut()
        .and_then(|s| s.port.as_mut())
        .expect("fixture has a port")
        .name = Some("http".into());
    let cases = [
        (
            no_port,
            r#"backend service "shop/web" names no port for path "/bad" on host "shop.example.com""#,
        ),
        (
            both,
            r#"backend service "shop/web" sets both port number 80 and port name "http" for path "/bad" on host "shop.example.com""#,
        ),
        (
            mk_backend("web", 0),
            r#"backend service "shop/web" port 0 is out of range for path "/bad" on host "shop.example.com""#,
        ),
        (
            mk_backend("web", 70000),
            r#"backend service "shop/web" port 70000 is out of range for path "/bad" on host "shop.example.com""#,
        ),
        (
            mk_backend("", 80),
            r#"backend service has an empty name for path "/bad" on host "shop.example.com""#,
        ),
    ];
    for (backend, message) in cases {
        assert_skipped(with_bad_path(bad_backend(backend)), Reason::InvalidBackend, message);
    }
}

#[test]
fn an_invalid_path_is_skipped() {
    let cases = [
        (
            mk_prefix("api", "web", 80),
            r#"invalid path "api" on host "shop.example.com": must start with "/""#,
        ),
        (
            mk_prefix("/a b", "web", 80),
            r#"invalid path "/a b" on host "shop.example.com": must not contain whitespace, control characters, '?' or '#' (found ' ')"#,
        ),
        (
            mk_prefix("/a?b=1", "web", 80),
            r#"invalid path "/a?b=1" on host "shop.example.com": must not contain whitespace, control characters, '?' or '#' (found '?')"#,
        ),
        (
            mk_path("/a#top", "Exact", mk_backend("web", 80)),
            r#"invalid path "/a#top" on host "shop.example.com": must not contain whitespace, control characters, '?' or '#' (found '#')"#,
        ),
        (
            mk_prefix("/a\u{7}", "web", 80),
            r#"invalid path "/a\u{7}" on host "shop.example.com": must not contain whitespace, control characters, '?' or '#' (found '\u{7}')"#,
        ),
        (
            mk_path("/a", "Regex", mk_backend("web", 80)),
            r#"invalid path "/a" on host "shop.example.com": pathType "Regex" is not Exact, Prefix or ImplementationSpecific"#,
        ),
        (
            mk_path("/a", "", mk_backend("web", 80)),
            r#"invalid path "/a" on host "shop.example.com": pathType is missing"#,
        ),
        (
            mk_path("", "Exact", mk_backend("web", 80)),
            r#"invalid path "" on host "shop.example.com": an Exact path must not be empty"#,
        ),
    ];
    for (path, message) in cases {
        assert_skipped(with_bad_path(path), Reason::InvalidPath, message);
    }
}

#[test]
fn an_invalid_path_on_any_host_says_so() {
    let compiled = with_bad_rule(mk_rule("", vec![mk_prefix("nope", "web", 80)]));
    assert_skipped(
        compiled,
        Reason::InvalidPath,
        r#"invalid path "nope" on any host: must start with "/""#,
    );
}

#[test]
fn an_invalid_host_skips_its_whole_rule() {
    let long_label = format!("{}.example.com", "a".repeat(64));
    let long_name = format!("{}.com", "abcdefghi.".repeat(26));
    let cases = [
        (
            "foo.*.com",
            r#"a wildcard must be the whole first label ("*.example.com")"#.to_string(),
        ),
        (
            "**.example.com",
            r#"a wildcard must be the whole first label ("*.example.com")"#.to_string(),
        ),
        (
            "*",
            r#"a wildcard must be the whole first label ("*.example.com")"#.to_string(),
        ),
        (
            "*foo.example.com",
            r#"a wildcard must be the whole first label ("*.example.com")"#.to_string(),
        ),
        ("10.0.0.1", "an IP address is not a host name".to_string()),
        ("*.", "empty label".to_string()),
        ("shop.example.com.", "empty label".to_string()),
        ("a..b", "empty label".to_string()),
        ("shop_1.example.com", label_error("shop_1")),
        ("-shop.example.com", label_error("-shop")),
        ("shop.example.com:8080", label_error("com:8080")),
        ("[::1]", label_error("[::1]")),
        ("bücher.example", label_error("bücher")),
        (long_label.as_str(), label_error(&"a".repeat(64))),
        (long_name.as_str(), "longer than 253 characters".to_string()),
    ];
    for (bad, why) in cases {
        // Two paths in the bad rule: one diagnostic for the rule, not one per path.
        let rule = mk_rule(bad, vec![mk_prefix("/x", "web", 80), mk_prefix("/y", "api", "http")]);
        let message = format!("invalid host {bad:?}, rule skipped: {why}");
        assert_skipped(with_bad_rule(rule), Reason::InvalidHost, &message);
    }
}

fn label_error(label: &str) -> String {
    format!(
        "label {label:?} is not a DNS-1123 label (letters, digits and '-', at most 63, starting and ending with a letter or digit)"
    )
}

#[test]
fn a_backend_without_endpoints_still_routes_and_is_reported_once_per_ingress() {
    let mut state = world_with(vec![
        mk_ingress(
            "shop",
            "a",
            vec![
                mk_rule(HOST, vec![mk_prefix("/", "web", 80), mk_prefix("/empty", "idle", 80)]),
                mk_rule("other.example.com", vec![mk_prefix("/empty", "idle", 80)]),
            ],
        ),
        mk_ingress(
            "shop",
            "b",
            vec![mk_rule("b.example.com", vec![mk_prefix("/", "idle", 80)])],
        ),
    ]);
    state.services.push(mk_service("shop", "idle", &[("", 80)]).into());
    let compiled = compile_default(&state);
    let expected = table(
        vec![
            (host("b.example.com"), vec![prefix("/", "shop/idle:80", "shop/b")]),
            (
                host("other.example.com"),
                vec![prefix("/empty", "shop/idle:80", "shop/a")],
            ),
            (
                host(HOST),
                vec![prefix("/", WEB, "shop/a"), prefix("/empty", "shop/idle:80", "shop/a")],
            ),
        ],
        vec![("shop/idle:80", pods(&[])), (WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(
        compiled.diagnostics,
        vec![
            diagnostic(
                "a",
                Reason::NoEndpoints,
                r#"backend "shop/idle:80" has no ready endpoints for path "/empty" on host "shop.example.com""#,
            ),
            diagnostic(
                "b",
                Reason::NoEndpoints,
                r#"backend "shop/idle:80" has no ready endpoints for path "/" on host "b.example.com""#
            ),
        ]
    );
}

#[test]
fn a_default_backend_without_endpoints_is_reported() {
    let mut state = world_with(vec![with_default_backend(
        mk_ingress("shop", "a", vec![]),
        mk_backend("idle", 80),
    )]);
    state.services.push(mk_service("shop", "idle", &[("", 80)]).into());
    let compiled = compile_default(&state);
    assert_eq!(compiled.table.default_backend.as_deref(), Some("shop/idle:80"));
    assert_eq!(
        compiled.diagnostics,
        vec![diagnostic(
            "a",
            Reason::NoEndpoints,
            r#"backend "shop/idle:80" has no ready endpoints for the default backend"#,
        )]
    );
}

#[test]
fn a_broken_default_backend_is_reported_and_the_rules_still_compile() {
    let ingress = with_default_backend(
        mk_ingress("shop", "a", vec![mk_rule(HOST, vec![mk_prefix("/", "web", 80)])]),
        mk_backend("nope", 80),
    );
    let compiled = compile_default(&world_with(vec![ingress]));
    assert_skipped(
        compiled,
        Reason::MissingService,
        r#"service "shop/nope" not found for the default backend"#,
    );
}

#[test]
fn a_repeated_path_in_one_ingress_is_a_conflict_and_the_first_wins() {
    assert_skipped(
        with_bad_path(mk_prefix("/", "api", "http")),
        Reason::Conflict,
        r#"prefix path "/" on host "shop.example.com" is already routed by an earlier path of this ingress"#,
    );
    // Normalised paths collide too: "/" again, spelled "//".
    assert_skipped(
        with_bad_path(mk_path("//", "ImplementationSpecific", mk_backend("api", "http"))),
        Reason::Conflict,
        r#"prefix path "/" on host "shop.example.com" is already routed by an earlier path of this ingress"#,
    );
}

#[test]
fn reasons_render_as_their_names() {
    for reason in Reason::ALL {
        assert_eq!(reason.as_str(), format!("{reason:?}"));
        assert_eq!(reason.to_string(), reason.as_str());
        assert_eq!(
            serde_json::to_value(reason).expect("reasons serialize"),
            serde_json::json!(reason.as_str())
        );
    }
}
