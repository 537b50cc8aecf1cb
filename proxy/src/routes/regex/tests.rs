use proptest::prelude::*;

use super::*;
use crate::{metrics::RouteStats, routes::rules::RouteRules, upstream::Upstream};

fn mk_route(name: &str, rank: u32) -> Arc<Route> {
    Arc::new(Route {
        name: name.into(),
        source: "ns/ing".into(),
        upstream: Arc::new(Upstream::new(name, Default::default(), Vec::new(), Default::default())),
        stats: RouteStats::detached(),
        ssl_redirect: false,
        redirect: None,
        client_protocol_header: None,
        rules: Arc::new(RouteRules {
            rank,
            ..RouteRules::default()
        }),
    })
}

fn mk_paths(patterns: &[&str]) -> RegexPaths {
    // Given in reverse, so only the ranks can put them in order.
    let rules: Vec<(&str, u32, Arc<Route>)> = patterns
        .iter()
        .enumerate()
        .rev()
        .map(|(rank, pattern)| (*pattern, rank as u32, mk_route(pattern, rank as u32)))
        .collect();
    let (paths, rejected) = RegexPaths::build(rules);
    assert_eq!(rejected, Vec::<(String, String)>::new());
    paths.expect("some paths")
}

fn hit(paths: &RegexPaths, path: &str) -> Option<String> {
    paths.lookup(path).map(|route| route.name.to_string())
}

#[test]
fn the_first_pattern_in_rank_order_that_matches_from_the_start_wins() {
    let paths = mk_paths(&["/api/v[0-9]+", "/api", "/"]);
    assert_eq!(hit(&paths, "/api/v2/users").as_deref(), Some("/api/v[0-9]+"));
    assert_eq!(hit(&paths, "/API/V2").as_deref(), Some("/api/v[0-9]+"));
    assert_eq!(hit(&paths, "/apix").as_deref(), Some("/api"));
    assert_eq!(hit(&paths, "/x/api").as_deref(), Some("/"));
    let no_root = mk_paths(&["/api"]);
    assert_eq!(hit(&no_root, "/x/api"), None);
}

#[test]
fn an_alternation_is_anchored_only_in_its_first_branch_as_in_nginx() {
    // `~* "^/a|/b"` is (^/a)|(/b): the second branch matches anywhere.
    let paths = mk_paths(&["/a|/b"]);
    assert_eq!(hit(&paths, "/x/b").as_deref(), Some("/a|/b"));
    assert_eq!(hit(&paths, "/x/a"), None);
}

#[test]
fn patterns_the_engine_cannot_run_are_reported_and_the_rest_served() {
    let rules = vec![
        ("/(?=x)", 0, mk_route("look-ahead", 0)),
        ("/(a)\\1", 1, mk_route("backreference", 1)),
        ("/ok", 2, mk_route("ok", 2)),
    ];
    let (paths, rejected) = RegexPaths::build(rules);
    assert_eq!(
        rejected.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["/(?=x)", "/(a)\\1"]
    );
    assert_eq!(hit(&paths.expect("one path"), "/ok").as_deref(), Some("ok"));
}

#[test]
fn ascii_only_as_nginxs_pcre_without_utf() {
    let paths = mk_paths(&["/\\w+$"]);
    assert_eq!(hit(&paths, "/abc_1").as_deref(), Some("/\\w+$"));
    assert_eq!(hit(&paths, "/é"), None);
}

proptest! {
    #[test]
    fn the_route_is_the_first_in_order_whose_own_regex_matches(
        patterns in prop::collection::vec("/[ab]{0,2}(\\.|\\*|\\$|[ab])?", 1..6),
        path in "/[ab./]{0,5}",
    ) {
        let unique: Vec<&str> = patterns.iter().enumerate()
            .filter(|(i, p)| !patterns[..*i].contains(p))
            .map(|(_, p)| p.as_str())
            .collect();
        let paths = mk_paths(&unique);
        let expected = unique
            .iter()
            .find(|p| location_regex(p).expect("compiles").is_match(path.as_bytes()))
            .map(|p| p.to_string());
        prop_assert_eq!(hit(&paths, &path), expected);
    }
}
