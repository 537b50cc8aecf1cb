//! `canary*`: a canary Ingress's backend joins the main route at its host, path and type
//! (controller.go `mergeAlternativeBackends`, lines 1610-1715); alone it is ignored.

use shunt_spec::{CanaryHeader, CanaryRule};

use super::*;

const CANARY: &str = "nginx.ingress.kubernetes.io/canary: \"true\"";

fn mk_main(paths: &[(&str, &str)]) -> String {
    mk_ingress("main", "", &mk_rule("a.example.com", paths))
}

fn mk_canary(name: &str, annotations: &str, paths: &[(&str, &str)]) -> String {
    mk_ingress(
        name,
        annotations,
        &mk_rule("a.example.com", paths).replace("name: web", "name: api"),
    )
}

/// The canary backend and rule of the route a request for `path` on a.example.com takes.
fn canary_of(compiled: &Compiled, path: &str) -> Option<(String, CanaryRule)> {
    let table = table(compiled);
    let route = table.lookup("a.example.com", path).expect("a route");
    let canary = route.rules.balance.as_ref()?.canary.as_ref()?;
    Some((canary.upstream.id.to_string(), canary.rule.clone()))
}

#[test]
fn canary_false_is_no_canary_and_its_other_keys_change_nothing() {
    // canary/main.go answers "configured but not enabled", which annotations.go skips.
    let annotations =
        "nginx.ingress.kubernetes.io/canary: \"false\"\nnginx.ingress.kubernetes.io/canary-weight: \"50\"";
    let compiled = compile_nginx(&[mk_ingress(
        "a",
        annotations,
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/"), WEB);
    assert_eq!(canary_of(&compiled, "/"), None);
}

#[test]
fn a_canary_joins_the_main_route_at_its_host_path_and_type() {
    let annotations = format!(
        "{CANARY}\nnginx.ingress.kubernetes.io/canary-by-header: X_Canary\nnginx.ingress.kubernetes.io/canary-by-cookie: beta\nnginx.ingress.kubernetes.io/canary-weight: \"20\""
    );
    let compiled = compile_nginx(&[
        mk_main(&[("/", "Prefix")]),
        mk_canary("b", &annotations, &[("/", "ImplementationSpecific")]),
    ]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/x"), WEB);
    let rule = CanaryRule {
        header: Some(CanaryHeader {
            name: "x-canary".into(),
            value: None,
        }),
        cookie: Some("beta".into()),
        weight: 20,
        weight_total: 100,
    };
    assert_eq!(canary_of(&compiled, "/x"), Some((API.to_string(), rule)));
    assert!(
        compiled.table.backends.contains_key(API),
        "the canary's backend is in the table"
    );
}

#[test]
fn a_canary_without_a_main_location_is_ignored() {
    // controller.go 1646: "unable to find real backend for alternative backend ... Deleting."
    let compiled = compile_nginx(&[
        mk_main(&[("/app", "Prefix")]),
        mk_canary("b", CANARY, &[("/", "Prefix"), ("/app", "Exact")]),
    ]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    assert_eq!(canary_of(&compiled, "/app"), None);
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/"), "404");
    assert!(!compiled.table.backends.contains_key(API));
    // A host only a canary names has no nginx server: no verdict, no route.
    let alone = compile_nginx(&[mk_canary("b", CANARY, &[("/", "Prefix")])]);
    assert!(alone.shadow.iter().all(|verdict| verdict.host != "a.example.com"));
    assert!(alone.table.hosts.is_empty());
}

#[test]
fn the_oldest_canary_of_a_main_backend_wins() {
    let second = format!("{CANARY}\nnginx.ingress.kubernetes.io/canary-weight: \"90\"");
    let compiled = compile_nginx(&[
        mk_main(&[("/", "Prefix")]),
        mk_canary("b", CANARY, &[("/", "Prefix")]),
        mk_canary("c", &second, &[("/", "Prefix")]),
    ]);
    let (backend, rule) = canary_of(&compiled, "/").expect("a canary");
    assert_eq!((backend.as_str(), rule.weight), (API, 0));
}

#[test]
fn canary_values_shunt_cannot_match_alike_refuse_the_host() {
    let cases = [
        ("canary-by-header-pattern: \"^v[0-9]+$\"", "UnsupportedAnnotation"),
        ("canary-weight: \"ten\"", "InvalidAnnotation"),
        ("canary-by-cookie: \"a b\"", "UnsupportedAnnotation"),
        ("canary-by-header-value: \"v;2\"", "InvalidAnnotation"),
        ("canary-by-cookie: \"a.b\"", "UnsupportedAnnotation"),
        ("canary-weight-total: \"99999999\"", "UnsupportedAnnotation"),
    ];
    for (entry, reason) in cases {
        let (key, _) = entry.split_once(':').expect("an entry");
        let annotations = format!(
            "{CANARY}\nnginx.ingress.kubernetes.io/canary-by-header: x-canary\nnginx.ingress.kubernetes.io/{entry}"
        );
        let compiled = compile_nginx(&[
            mk_main(&[("/", "Prefix")]),
            mk_canary("b", &annotations, &[("/", "Prefix")]),
        ]);
        assert_eq!(
            refusals(&compiled, "a.example.com"),
            [format!("{reason}: nginx.ingress.kubernetes.io/{key}")],
            "{entry}"
        );
    }
}

#[test]
fn a_pattern_behind_a_header_value_is_ignored_as_balancer_lua_ignores_it() {
    let annotations = format!(
        "{CANARY}\nnginx.ingress.kubernetes.io/canary-by-header: x-canary\nnginx.ingress.kubernetes.io/canary-by-header-value: v2\nnginx.ingress.kubernetes.io/canary-by-header-pattern: \"^v.*\""
    );
    let compiled = compile_nginx(&[
        mk_main(&[("/", "Prefix")]),
        mk_canary("b", &annotations, &[("/", "Prefix")]),
    ]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let (_, rule) = canary_of(&compiled, "/").expect("a canary");
    assert_eq!(rule.header.and_then(|header| header.value).as_deref(), Some("v2"));
}

#[test]
fn a_canary_backend_that_is_a_main_one_on_the_host_refuses_it() {
    let compiled = compile_nginx(&[
        mk_main(&[("/", "Prefix")]),
        mk_ingress(
            "other",
            "",
            &mk_rule("a.example.com", &[("/api", "Prefix")]).replace("name: web", "name: api"),
        ),
        mk_canary("b", CANARY, &[("/", "Prefix")]),
    ]);
    let refused = refusals(&compiled, "a.example.com");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].starts_with("UnsupportedAnnotation: nginx.ingress.kubernetes.io/canary"));
}
