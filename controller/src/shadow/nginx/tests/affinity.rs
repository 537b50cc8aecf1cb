//! `affinity: cookie` as sessionaffinity/main.go parses it and controller.go's `createServers`
//! gathers it per backend; the cookie itself is the proxy's (upstream/balance/affinity).

use proptest::prelude::*;
use shunt_spec::{AffinityMode, CookieAffinity, SameSite};

use super::*;

const KEY: &str = "nginx.ingress.kubernetes.io/";

fn mk_annotations(entries: &[(&str, &str)]) -> String {
    let lines: Vec<String> = entries.iter().map(|(k, v)| format!("{KEY}{k}: {v:?}")).collect();
    lines.join("\n")
}

/// The affinity of the route `path` on `host` reaches, if any.
fn affinity_at(compiled: &Compiled, host: &str, path: &str) -> Option<CookieAffinity> {
    let table = table(compiled);
    let route = table.lookup(host, path).expect("a route");
    route
        .rules
        .balance
        .as_ref()
        .and_then(|balance| balance.affinity.clone())
}

fn mk_default(path: &str) -> CookieAffinity {
    CookieAffinity {
        mode: AffinityMode::Balanced,
        name: "INGRESSCOOKIE".into(),
        set_cookie: true,
        path: path.into(),
        domain: None,
        max_age: None,
        expires: None,
        same_site: None,
        conditional_same_site_none: false,
        secure: false,
        change_on_failure: false,
    }
}

#[test]
fn affinity_cookie_alone_takes_main_go_defaults_and_the_location_path() {
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        &mk_annotations(&[("affinity", "cookie")]),
        &mk_rule("a.example.com", &[("/app", "Prefix"), ("/", "Prefix")]),
    )]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    // sticky.lua `set_cookie`: `cookie_path = ... or ngx.var.location_path`.
    assert_eq!(
        affinity_at(&compiled, "a.example.com", "/app/x"),
        Some(mk_default("/app"))
    );
    assert_eq!(affinity_at(&compiled, "a.example.com", "/"), Some(mk_default("/")));
}

#[test]
fn every_session_cookie_key_reaches_the_route() {
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        &mk_annotations(&[
            ("affinity", "cookie"),
            ("affinity-mode", "persistent"),
            ("session-cookie-name", "route"),
            ("session-cookie-path", "/"),
            ("session-cookie-domain", "example.com"),
            ("session-cookie-max-age", "172800"),
            ("session-cookie-expires", "172800"),
            ("session-cookie-samesite", "None"),
            ("session-cookie-conditional-samesite-none", "true"),
            ("session-cookie-secure", "true"),
            ("session-cookie-change-on-failure", "true"),
        ]),
        &mk_rule("a.example.com", &[("/app", "Prefix")]),
    )]);
    assert_eq!(verdict(&compiled, "a.example.com").verdict, Verdict::Identical);
    let want = CookieAffinity {
        mode: AffinityMode::Persistent,
        name: "route".into(),
        set_cookie: true,
        path: "/".into(),
        domain: Some("example.com".into()),
        max_age: Some(172_800),
        expires: Some(172_800),
        same_site: Some(SameSite::None),
        conditional_same_site_none: true,
        secure: true,
        change_on_failure: true,
    };
    assert_eq!(affinity_at(&compiled, "a.example.com", "/app"), Some(want));
}

#[test]
fn values_the_parsers_reject_are_the_defaults_as_main_go_ignores_them() {
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        &mk_annotations(&[
            ("affinity", "cookie"),
            ("affinity-mode", "sticky"),
            ("session-cookie-name", "a;b"),
            ("session-cookie-max-age", "-0"),
            ("session-cookie-expires", "soon"),
            // The validator takes any case; lua-resty-cookie's `bake` drops all but `Lax`.
            ("session-cookie-samesite", "lax"),
            ("session-cookie-secure", "yes"),
        ]),
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    assert_eq!(affinity_at(&compiled, "a.example.com", "/"), Some(mk_default("/")));
}

#[test]
fn values_nginx_would_write_as_shunt_does_not_refuse_the_host_naming_the_key() {
    for (key, value) in [
        ("session-cookie-name", "my cookie"),
        ("session-cookie-max-age", "0x10"),
        ("session-cookie-expires", "99999999999"),
    ] {
        let compiled = compile_nginx(&[mk_ingress(
            "a",
            &mk_annotations(&[("affinity", "cookie"), (key, value)]),
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        )]);
        assert_eq!(
            refusals(&compiled, "a.example.com"),
            [format!("UnsupportedAnnotation: {KEY}{key}")],
            "{key}"
        );
    }
}

#[test]
fn only_affinity_cookie_is_an_affinity_and_other_values_change_nothing() {
    // main.go validates `cookie` case-sensitively; balancer.lua checks `name == "cookie"`.
    for value in ["ip", "Cookie", ""] {
        let compiled = compile_nginx(&[mk_ingress(
            "a",
            &mk_annotations(&[("affinity", value), ("session-cookie-name", "x")]),
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        )]);
        assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new(), "{value}");
        assert_eq!(affinity_at(&compiled, "a.example.com", "/"), None, "{value}");
    }
}

#[test]
fn the_backend_is_sticky_for_every_route_but_only_the_cookie_ingress_sets_the_cookie() {
    // controller.go: the upstream's affinity is any Ingress's; `locations` lists only the
    // paths of `affinity: cookie` Ingresses (sticky.lua `should_set_cookie`); the mode is the
    // first Ingress's that names one, cookie or not.
    let compiled = compile_nginx(&[
        mk_ingress(
            "a",
            &mk_annotations(&[("affinity-mode", "persistent")]),
            &mk_rule("a.example.com", &[("/a", "Prefix")]),
        ),
        mk_ingress(
            "b",
            &mk_annotations(&[("affinity", "cookie"), ("session-cookie-name", "B")]),
            &mk_rule("a.example.com", &[("/b", "Prefix")]),
        ),
    ]);
    let a = affinity_at(&compiled, "a.example.com", "/a").expect("sticky");
    let b = affinity_at(&compiled, "a.example.com", "/b").expect("sticky");
    assert_eq!(
        (a.mode, a.set_cookie, a.name.as_str()),
        (AffinityMode::Persistent, false, "B")
    );
    assert_eq!(
        (b.mode, b.set_cookie, b.path.as_str()),
        (AffinityMode::Persistent, true, "/b")
    );
}

#[test]
fn an_empty_ingress_path_reads_the_cookie_but_never_sets_it() {
    // `locations` keeps `path.Path` (""), `$location_path` is "/": they never match.
    let spec = "rules:\n- host: a.example.com\n  http:\n    paths:\n    - {pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}";
    let compiled = compile_nginx(&[mk_ingress("a", &mk_annotations(&[("affinity", "cookie")]), spec)]);
    let affinity = affinity_at(&compiled, "a.example.com", "/").expect("sticky");
    assert_eq!((affinity.set_cookie, affinity.path.as_str()), (false, "/"));
}

#[test]
fn affinity_replaces_the_hash_key_of_its_backend() {
    // balancer.lua `get_implementation`: sticky_* is chosen before chash.
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        &mk_annotations(&[("affinity", "cookie"), ("upstream-hash-by", "$remote_addr")]),
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )]);
    let table = table(&compiled);
    let balance = table.lookup("a.example.com", "/").and_then(|r| r.rules.balance.clone());
    let balance = balance.expect("affinity");
    assert_eq!(balance.hash, None);
    assert!(balance.affinity.is_some());
}

#[test]
fn a_sticky_backend_with_a_canary_refuses_its_host() {
    let compiled = compile_nginx(&[
        mk_ingress(
            "a",
            &mk_annotations(&[("affinity", "cookie")]),
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        ),
        mk_ingress(
            "b",
            &mk_annotations(&[("canary", "true"), ("canary-weight", "10")]),
            &mk_rule("a.example.com", &[("/", "Prefix")]).replace("name: web", "name: api"),
        ),
    ]);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        [format!(
            "UnsupportedAnnotation: {KEY}affinity: with a canary on the same backend"
        )]
    );
}

proptest! {
    #[test]
    fn any_values_parse_without_panic_into_bounded_cookie_text(
        name in "[ -~]{0,300}",
        path in "[ -~]{0,40}",
        max_age in "[ -~0-9]{0,12}",
    ) {
        let mut keys = crate::shadow::nginx::affinity::AffinityKeys::default();
        keys.set("affinity", "cookie");
        keys.set("session-cookie-name", &name);
        keys.set("session-cookie-path", &path);
        keys.set("session-cookie-max-age", &max_age);
        if let Ok(affinity) = keys.resolve() {
            let settings = affinity.settings;
            let plain = |text: &str| text.bytes().all(|b| b.is_ascii_graphic() && b != b';' && b != b'=');
            prop_assert!(plain(&settings.name) && settings.name.len() <= shunt_spec::MAX_NAME_LEN);
            prop_assert!(settings.path.as_deref().is_none_or(|p| p.bytes().all(|b| b.is_ascii_graphic() && b != b';')));
            if let Some(seconds) = settings.max_age {
                prop_assert_eq!(max_age.trim().parse::<i64>().ok(), Some(seconds));
            }
        }
    }

    #[test]
    fn the_expires_pattern_is_go_s_regexp(value in "[-0-9a ]{0,8}") {
        let go = ::regex::Regex::new(r"(^0|-?[1-9][0-9]*$)").expect("a pattern");
        prop_assert_eq!(crate::shadow::nginx::affinity::expires_pattern(&value), go.is_match(&value));
    }
}
