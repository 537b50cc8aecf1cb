//! The Kubernetes Ingress path-matching table, row by row, through the real proxy.
//! <https://kubernetes.io/docs/concepts/services-networking/ingress/#examples>

use http::StatusCode;

use crate::support::*;

const HOST: &str = "paths.example.com";

/// One rule on [`HOST`] with these `(path, pathType)`s, each to its own backend named `p<index>`.
struct PathRule(Site);

impl PathRule {
    async fn serve(paths: &[(&str, &str)]) -> PathRule {
        Self::serve_with(paths, false).await
    }

    /// With `default`, a `spec.defaultBackend` named `default` catches what no path matches.
    async fn serve_with(paths: &[(&str, &str)], default: bool) -> PathRule {
        let mut names: Vec<String> = (0..paths.len()).map(|index| format!("p{index}")).collect();
        let rule = paths
            .iter()
            .zip(&names)
            .map(|((path, kind), name)| mk_path(path, kind, name, 80));
        let mut ingress = mk_ingress("paths", "paths").rule(HOST, rule);
        if default {
            ingress = ingress.default_backend("default", 80);
            names.push("default".to_string());
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        PathRule(Site::start("paths", &names, &[&ingress], &[]).await)
    }

    /// Each request path must reach the named backend, or get 404 for `None`.
    async fn assert_routes(&self, cases: &[(&str, Option<&str>)]) {
        for &(path, expected) in cases {
            let reply = self.0.shunt.get(HOST, path).await;
            match expected {
                Some(backend) => assert_eq!(reply.backend(), backend, "GET {path}"),
                None => {
                    assert_eq!(
                        reply.status,
                        StatusCode::NOT_FOUND,
                        "GET {path} must match nothing: {}",
                        reply.text()
                    )
                }
            }
        }
    }
}

#[tokio::test]
async fn prefix_slash_matches_every_path() {
    let rule = PathRule::serve(&[("/", "Prefix")]).await;
    let cases = [
        ("/", Some("p0")),
        ("/foo", Some("p0")),
        ("/foo/bar/", Some("p0")),
        ("/.well-known/x", Some("p0")),
    ];
    rule.assert_routes(&cases).await;
}

#[tokio::test]
async fn exact_foo_matches_foo_but_not_bar_nor_foo_slash() {
    let rule = PathRule::serve(&[("/foo", "Exact")]).await;
    rule.assert_routes(&[
        ("/foo", Some("p0")),
        ("/bar", None),
        ("/foo/", None),
        ("/foo/bar", None),
    ])
    .await;
}

#[tokio::test]
async fn exact_foo_slash_does_not_match_foo() {
    let rule = PathRule::serve(&[("/foo/", "Exact")]).await;
    rule.assert_routes(&[("/foo", None), ("/foo/", Some("p0"))]).await;
}

#[tokio::test]
async fn prefix_foo_matches_foo_and_foo_slash() {
    let rule = PathRule::serve(&[("/foo", "Prefix")]).await;
    rule.assert_routes(&[("/foo", Some("p0")), ("/foo/", Some("p0")), ("/foobar", None)])
        .await;
}

#[tokio::test]
async fn prefix_foo_slash_matches_foo_and_foo_slash() {
    let rule = PathRule::serve(&[("/foo/", "Prefix")]).await;
    rule.assert_routes(&[("/foo", Some("p0")), ("/foo/", Some("p0")), ("/foobar", None)])
        .await;
}

#[tokio::test]
async fn prefix_aaa_bb_does_not_match_aaa_bbb() {
    let rule = PathRule::serve(&[("/aaa/bb", "Prefix")]).await;
    rule.assert_routes(&[("/aaa/bbb", None), ("/aaa/bb", Some("p0")), ("/aaa/bb/c", Some("p0"))])
        .await;
}

#[tokio::test]
async fn prefix_aaa_bbb_slash_matches_aaa_bbb_ignoring_the_trailing_slash() {
    let rule = PathRule::serve(&[("/aaa/bbb/", "Prefix")]).await;
    rule.assert_routes(&[("/aaa/bbb", Some("p0")), ("/aaa/bbb/", Some("p0"))])
        .await;
}

#[tokio::test]
async fn prefix_aaa_bbb_matches_trailing_slash_and_subpaths_but_not_a_string_prefix() {
    let rule = PathRule::serve(&[("/aaa/bbb", "Prefix")]).await;
    let cases = [
        ("/aaa/bbb", Some("p0")),
        ("/aaa/bbb/", Some("p0")),
        ("/aaa/bbb/ccc", Some("p0")),
        ("/aaa/bbbxyz", None),
    ];
    rule.assert_routes(&cases).await;
}

#[tokio::test]
async fn the_longest_matching_prefix_wins() {
    let rule = PathRule::serve(&[("/", "Prefix"), ("/aaa", "Prefix"), ("/aaa/bbb", "Prefix")]).await;
    let cases = [
        ("/aaa/bbb", Some("p2")),
        ("/aaa/ccc", Some("p1")),
        ("/ccc", Some("p0")),
        ("/aaa/bbbxyz", Some("p1")),
    ];
    rule.assert_routes(&cases).await;
}

#[tokio::test]
async fn a_path_no_prefix_matches_goes_to_the_default_backend() {
    let rule = PathRule::serve_with(&[("/aaa", "Prefix")], true).await;
    rule.assert_routes(&[("/ccc", Some("default")), ("/aaa/x", Some("p0"))])
        .await;
}

#[tokio::test]
async fn exact_beats_prefix_for_the_same_path() {
    // Prefix first, so a table that keeps the first insertion would get this wrong.
    let rule = PathRule::serve(&[("/foo", "Prefix"), ("/foo", "Exact")]).await;
    rule.assert_routes(&[("/foo", Some("p1")), ("/foo/", Some("p0")), ("/foo/bar", Some("p0"))])
        .await;
}

#[tokio::test]
async fn implementation_specific_matches_like_prefix() {
    let rule = PathRule::serve(&[("/foo", "ImplementationSpecific")]).await;
    rule.assert_routes(&[("/foo", Some("p0")), ("/foo/bar", Some("p0")), ("/foobar", None)])
        .await;
}

#[tokio::test]
async fn query_strings_are_ignored_for_matching_but_forwarded() {
    let rule = PathRule::serve(&[("/foo", "Exact")]).await;
    let reply = rule.0.shunt.get(HOST, "/foo?x=1&next=/bar").await;
    assert_eq!(reply.backend(), "p0");
    assert_eq!(reply.json()["path_and_query"], "/foo?x=1&next=/bar");
}
