//! The spec's precedence among the matches of all routes on a host, as each path's `rank`.

use proptest::prelude::*;
use shunt_spec::PathKind;

use super::*;

#[test]
fn header_matches_rank_before_a_bare_prefix_of_the_same_path() {
    // The rules of upstream's httproute-matching.yaml: `/` or `version: one` to v1, `/v2` or
    // `version: two` to v2.
    let rules = "[{matches: [{path: {type: PathPrefix, value: /}}, {headers: [{name: version, value: one}]}], backendRefs: [{name: v1, port: 8080}]}, \
                 {matches: [{path: {type: PathPrefix, value: /v2}}, {headers: [{name: version, value: two}]}], backendRefs: [{name: v2, port: 8080}]}]";
    let compiled = compiled(&mk_route("infra", "matching", "same", "[]", rules));
    let ranked: Vec<(&str, usize, &str)> = paths(&compiled.table, &HostMatch::Any)
        .iter()
        .map(|path| {
            let headers = path.options.conditions.as_ref().map_or(0, |c| c.headers.len());
            (path.path.as_str(), headers, path.backend.as_str())
        })
        .collect();
    assert_eq!(
        ranked,
        [
            ("/v2", 0, "infra/v2:8080"),
            ("/", 1, "infra/v1:8080"),
            ("/", 1, "infra/v2:8080"),
            ("/", 0, "infra/v1:8080")
        ]
    );
}

#[test]
fn across_routes_the_older_route_wins_a_tie_then_the_name() {
    let older = mk_route(
        "infra",
        "zeta",
        "same",
        "[a.example.com]",
        "[{backendRefs: [{name: v1, port: 8080}]}]",
    )
    .replace("name: zeta}", "name: zeta, creationTimestamp: '2020-01-01T00:00:00Z'}");
    let newer = mk_route(
        "infra",
        "alpha",
        "same",
        "[a.example.com]",
        "[{backendRefs: [{name: v2, port: 8080}]}]",
    )
    .replace(
        "name: alpha}",
        "name: alpha, creationTimestamp: '2021-01-01T00:00:00Z'}",
    );
    let compiled = compiled(&format!("{newer}{older}"));
    let paths = paths(&compiled.table, &exact("a.example.com"));
    assert_eq!(paths.len(), 1, "the newer route's equal path is never reached");
    assert_eq!(paths[0].backend, "infra/v1:8080");
    let unnamed = mk_route(
        "infra",
        "beta",
        "same",
        "[a.example.com]",
        "[{backendRefs: [{name: v3, port: 8080}]}]",
    );
    let by_name = super::compiled(&format!(
        "{unnamed}{}",
        unnamed.replace("beta", "alpha").replace("v3", "v2")
    ));
    assert_eq!(
        super::paths(&by_name.table, &exact("a.example.com"))[0].backend,
        "infra/v2:8080"
    );
}

/// A match as the spec ranks it: (exact, path length, method, headers, query).
type Shape = (bool, usize, bool, usize, usize);

/// Whether `a` must be tried before `b` by the spec's first five rules (false on a tie).
fn beats(a: Shape, b: Shape) -> bool {
    if a.0 != b.0 {
        return a.0;
    }
    if a.1 != b.1 {
        return a.1 > b.1;
    }
    if a.2 != b.2 {
        return a.2;
    }
    if a.3 != b.3 {
        return a.3 > b.3;
    }
    a.4 > b.4
}

fn shape(path: &PathSpec) -> Shape {
    let conditions = path.options.conditions.clone().unwrap_or_default();
    (
        path.kind == PathKind::Exact,
        path.path.len(),
        conditions.method.is_some(),
        conditions.headers.len(),
        conditions.query.len(),
    )
}

fn rule() -> impl Strategy<Value = String> {
    let path = prop::sample::select(vec!["/", "/a", "/a/b", "/abc"]);
    (any::<bool>(), path, any::<bool>(), 0..3usize, 0..3usize).prop_map(|(exact, path, method, headers, query)| {
        let kind = if exact { "Exact" } else { "PathPrefix" };
        let method = if method { ", method: GET" } else { "" };
        let headers: Vec<String> = (0..headers).map(|at| format!("{{name: h{at}, value: x}}")).collect();
        let query: Vec<String> = (0..query).map(|at| format!("{{name: q{at}, value: x}}")).collect();
        format!(
            "{{matches: [{{path: {{type: {kind}, value: {path}}}, headers: [{}], queryParams: [{}]{method}}}], backendRefs: [{{name: v1, port: 8080}}]}}",
            headers.join(", "),
            query.join(", ")
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the routes, a path ranked later never beats one ranked earlier, and ranks are
    /// 1, 2, 3... on every host.
    #[test]
    fn ranks_follow_the_specs_precedence(routes in prop::collection::vec(prop::collection::vec(rule(), 1..4), 1..4)) {
        let manifests: String = routes
            .iter()
            .enumerate()
            .map(|(at, rules)| mk_route("infra", &format!("r{at}"), "same", "[a.example.com]", &format!("[{}]", rules.join(", "))))
            .collect();
        let compiled = compiled(&manifests);
        let paths = paths(&compiled.table, &exact("a.example.com"));
        prop_assert!(!paths.is_empty());
        for (at, path) in paths.iter().enumerate() {
            prop_assert_eq!(path.options.rank as usize, at + 1);
            for later in &paths[at + 1..] {
                prop_assert!(!beats(shape(later), shape(path)), "{:?} ranked after {:?}", later, path);
            }
        }
    }
}
