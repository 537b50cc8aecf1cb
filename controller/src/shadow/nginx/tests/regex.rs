//! Hosts in regex mode: `use-regex` and `rewrite-target` make every location of the host a
//! case-insensitive regex anchored at the start, tried in ingress-nginx's order.

use proptest::prelude::*;
use shunt_spec::PathKind;

use super::*;

/// A rule for `host` with `(path, pathType, service)` entries.
fn mk_rule_to(host: &str, paths: &[(&str, &str, &str)]) -> String {
    let paths: String = paths
        .iter()
        .map(|(path, kind, service)| {
            format!("      - {{path: \"{path}\", pathType: {kind}, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n")
        })
        .collect();
    format!("rules:\n- host: {host}\n  http:\n    paths:\n{paths}")
}

const USE_REGEX: &str = "nginx.ingress.kubernetes.io/use-regex: \"true\"";

/// The backend and the path the pod gets for a plain-HTTP request, or `404`.
fn forwarded(compiled: &Compiled, host: &str, path_and_query: &str) -> String {
    let table = table(compiled);
    let target: http::uri::PathAndQuery = path_and_query.parse().expect("a valid path");
    let Some(route) = table.lookup_on(host, target.path(), PLAIN) else {
        return "404".to_string();
    };
    let rewritten = route
        .rules
        .rewrite
        .as_ref()
        .and_then(|rewrite| rewrite.apply(target.path(), target.query()))
        .unwrap_or(target);
    format!("{} {rewritten}", route.upstream.id)
}

#[test]
fn use_regex_makes_every_path_of_the_host_a_case_insensitive_regex_first_match_wins() {
    let regex = mk_ingress(
        "regex",
        USE_REGEX,
        &mk_rule_to("a.example.com", &[("/api/v[0-9]+", "ImplementationSpecific", "api")]),
    );
    let plain = mk_ingress(
        "plain",
        "",
        &mk_rule_to("a.example.com", &[("/", "Prefix", "web"), ("/docs", "Exact", "web")]),
    );
    let compiled = compile_nginx(&[regex, plain]);
    assert!(compiled.table.hosts[0].paths.iter().all(|p| p.kind == PathKind::Regex));
    assert_eq!(
        forwarded(&compiled, "a.example.com", "/API/V2/x"),
        "shop/api:80 /API/V2/x"
    );
    assert_eq!(forwarded(&compiled, "a.example.com", "/api/vx"), "shop/web:80 /api/vx");
    // Exact is a regex too: `^/docs` matches what starts with it.
    assert_eq!(
        forwarded(&compiled, "a.example.com", "/docs/more"),
        "shop/web:80 /docs/more"
    );
    assert_eq!(verdict(&compiled, "a.example.com").verdict, Verdict::Identical);
}

#[test]
fn rewrite_target_substitutes_the_groups_and_keeps_the_query() {
    let annotations =
        "nginx.ingress.kubernetes.io/rewrite-target: /$2\nnginx.ingress.kubernetes.io/x-forwarded-prefix: /api";
    let compiled = compile_nginx(&[mk_ingress(
        "api",
        annotations,
        &mk_rule_to("a.example.com", &[("/api(/|$)(.*)", "ImplementationSpecific", "api")]),
    )]);
    assert_eq!(
        forwarded(&compiled, "a.example.com", "/api/users/7?x=1"),
        "shop/api:80 /users/7?x=1"
    );
    assert_eq!(forwarded(&compiled, "a.example.com", "/api"), "shop/api:80 /");
    assert_eq!(forwarded(&compiled, "a.example.com", "/apix"), "404");
    let rewrite = compiled.table.hosts[0].paths[0]
        .options
        .rewrite
        .clone()
        .expect("a rewrite");
    assert_eq!(rewrite.forwarded_prefix.as_deref(), Some("/api"));
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

#[test]
fn a_prefix_path_without_a_regex_of_its_own_matches_as_a_character_prefix_on_a_regex_host() {
    let regex = mk_ingress(
        "regex",
        USE_REGEX,
        &mk_rule_to("a.example.com", &[("/z.*", "ImplementationSpecific", "api")]),
    );
    let plain = mk_ingress("plain", "", &mk_rule_to("a.example.com", &[("/app", "Prefix", "web")]));
    let compiled = compile_nginx(&[regex, plain]);
    for path in ["/app", "/app/", "/APPLE"] {
        assert_eq!(
            forwarded(&compiled, "a.example.com", path),
            format!("shop/web:80 {path}")
        );
    }
}

#[test]
fn an_exact_root_behind_the_default_backend_never_answers() {
    let compiled = compile_nginx(&[mk_ingress(
        "regex",
        USE_REGEX,
        &mk_rule_to(
            "a.example.com",
            &[("/", "Exact", "web"), ("/a.+", "ImplementationSpecific", "api")],
        ),
    )]);
    assert_eq!(forwarded(&compiled, "a.example.com", "/"), "404");
    assert_eq!(forwarded(&compiled, "a.example.com", "/ab"), "shop/api:80 /ab");
}

#[test]
fn patterns_the_engine_cannot_run_refuse_the_host() {
    let compiled = compile_nginx(&[mk_ingress(
        "regex",
        USE_REGEX,
        &mk_rule_to("a.example.com", &[("/(?!admin).*", "ImplementationSpecific", "web")]),
    )]);
    let refused = refusals(&compiled, "a.example.com");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].starts_with("UnsupportedPath: "), "{refused:?}");
}

#[test]
fn rewrite_targets_with_nginx_variables_are_refused() {
    for (target, reason) in [("/$host/$1", "UnsupportedAnnotation"), ("/a b", "InvalidAnnotation")] {
        let annotation = format!("nginx.ingress.kubernetes.io/rewrite-target: \"{target}\"");
        let compiled = compile_nginx(&[mk_ingress(
            "api",
            &annotation,
            &mk_rule_to("a.example.com", &[("/api(.*)", "ImplementationSpecific", "api")]),
        )]);
        assert_eq!(
            refusals(&compiled, "a.example.com"),
            [format!("{reason}: nginx.ingress.kubernetes.io/rewrite-target")]
        );
    }
}

#[test]
fn app_root_on_a_regex_host_answers_the_root_first() {
    let annotations = format!("{USE_REGEX}\nnginx.ingress.kubernetes.io/app-root: /app");
    let compiled = compile_nginx(&[mk_ingress(
        "regex",
        &annotations,
        &mk_rule_to("a.example.com", &[("/.*", "ImplementationSpecific", "web")]),
    )]);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/"),
        "302 http://a.example.com/app"
    );
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/x"), WEB);
}

proptest! {
    /// With literal paths (no regex characters, each spelled once), regex mode is "the longest
    /// path that starts the request, ignoring case": the order ingress-nginx sorts locations in.
    #[test]
    fn literal_paths_on_a_regex_host_answer_by_the_longest_case_insensitive_prefix(
        paths in prop::collection::btree_map("/[ab]{1,3}/?", (any::<bool>(), any::<bool>()), 1..6),
        request in "/[abAB/]{0,5}",
    ) {
        // (path, exact, from the regex Ingress) -> the backend that says which Ingress and type.
        let entries: Vec<(String, bool, bool)> = paths.iter().map(|(p, (e, r))| (p.clone(), *e, *r)).collect();
        let service = |exact: bool, regex: bool| match (exact, regex) {
            (false, false) => "web",
            (true, false) => "api",
            (false, true) => "web2",
            (true, true) => "api2",
        };
        let rule = |regex: bool| {
            let mut list: Vec<(&str, &str, &str)> = vec![];
            // The root for the plain Ingress; a path no request reaches keeps the host in regex
            // mode whatever was drawn.
            list.push(if regex { ("/zzz", "Prefix", "api2") } else { ("/", "Prefix", "web") });
            for (path, exact, from_regex) in &entries {
                if *from_regex == regex {
                    list.push((path, if *exact { "Exact" } else { "Prefix" }, service(*exact, regex)));
                }
            }
            mk_rule_to("a.example.com", &list)
        };
        let services = "---\napiVersion: v1\nkind: Service\nmetadata: {namespace: shop, name: web2}\nspec: {ports: [{port: 80}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {namespace: shop, name: api2}\nspec: {ports: [{port: 80}]}";
        let compiled = compile_nginx(&[
            mk_ingress("plain", "", &rule(false)),
            mk_ingress("regex", USE_REGEX, &rule(true)) + services,
        ]);
        let lower = request.to_ascii_lowercase();
        let expected = entries
            .iter()
            .filter(|(path, _, _)| lower.starts_with(path.as_str()))
            .max_by_key(|(path, _, _)| path.len())
            .map_or("web", |(_, exact, regex)| service(*exact, *regex));
        let got = forwarded(&compiled, "a.example.com", &request);
        let expected = format!("shop/{expected}:80");
        prop_assert_eq!(got.split(' ').next(), Some(expected.as_str()), "{:?}", entries);
    }
}
