//! Rule names (upstream conformance `httproute-named-rule`, `grpcroute-named-rule`, v1.6.1):
//! accepted and served as any rule; a name the CRD refuses, or one given twice, refuses the route.

use super::*;

fn accepted(rules: &str) -> (String, String, String) {
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", rules));
    parent_conditions(&status(&compiled), "web", "same").swap_remove(0)
}

fn named(first: &str, second: &str) -> String {
    format!(
        "[{{name: {first}, matches: [{{path: {{type: PathPrefix, value: /named}}}}], backendRefs: [{{name: v1, port: 8080}}]}}, \
          {{name: {second}, matches: [{{path: {{type: PathPrefix, value: /other}}}}], backendRefs: [{{name: v2, port: 8080}}]}}]"
    )
}

#[test]
fn named_rules_are_served_and_bad_or_repeated_names_refuse_the_route() {
    let ok = condition("Accepted", "True", "Accepted");
    let refused = condition("Accepted", "False", "UnsupportedValue");
    assert_eq!(accepted(&named("named-rule", "b.c-1")), ok);
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", &named("a", "b")));
    let served: Vec<&str> = paths(&compiled.table, &exact("web.example.com"))
        .iter()
        .map(|path| path.backend.as_str())
        .collect();
    assert!(
        served.contains(&"infra/v1:8080") && served.contains(&"infra/v2:8080"),
        "{served:?}"
    );
    let long = format!("{}.a", "a".repeat(252));
    for (first, second) in [
        ("same", "same"),
        ("Upper", "b"),
        ("-a", "b"),
        ("a-", "b"),
        ("a..b", "c"),
        ("a_b", "c"),
        ("''", "c"),
        (long.as_str(), "c"),
    ] {
        assert_eq!(accepted(&named(first, second)), refused, "{first} {second}");
    }
}
