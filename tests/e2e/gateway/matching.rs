//! Path, header, query and method matching, and precedence within and across routes.

use http::StatusCode;

use super::*;

/// An HTTPRoute of `gateway-conformance-infra` on `same-namespace` with `hostnames` and `rules`.
fn route(name: &str, hostnames: &str, rules: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{parentRefs: [{{name: same-namespace}}], hostnames: {hostnames}, rules: {rules}}}\n"
    )
}

fn to(backend: &str) -> String {
    format!("backendRefs: [{{name: {backend}, port: 8080}}]")
}

async fn expect_404(site: &Conformance, requests: Vec<Request<Body>>) {
    for request in requests {
        let what = format!("{} {} {:?}", request.method(), request.uri(), request.headers());
        assert_eq!(site.shunt.send(request).await.status, StatusCode::NOT_FOUND, "{what}");
    }
}

/// httproute-simple-same-namespace: one route, no match, to v1; accepted with its refs resolved.
#[tokio::test]
async fn simple_same_namespace() {
    let site = Conformance::start(&route(
        "gateway-conformance-infra-test",
        "[]",
        &format!("[{{{}}}]", to("infra-backend-v1")),
    ))
    .await;
    site.expect_backends(&[(get_on("example.com", "/"), "infra-backend-v1")])
        .await;
    assert_eq!(
        site.parent_conditions("gateway-conformance-infra-test", "same-namespace")
            .await,
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
}

/// httproute-matching: `/` or `version: one` to v1, `/v2` or `version: two` to v2.
#[tokio::test]
async fn matching() {
    let rules = format!(
        "[{{matches: [{{path: {{type: PathPrefix, value: /}}}}, {{headers: [{{name: version, value: one}}]}}], {}}}, \
          {{matches: [{{path: {{type: PathPrefix, value: /v2}}}}, {{headers: [{{name: version, value: two}}]}}], {}}}]",
        to("infra-backend-v1"),
        to("infra-backend-v2")
    );
    let site = Conformance::start(&route("matching", "[]", &rules)).await;
    let h = "example.com";
    site.expect_backends(&[
        (get_on(h, "/"), "infra-backend-v1"),
        (get_on(h, "/example"), "infra-backend-v1"),
        (request("GET", h, "/", &[("version", "one")]), "infra-backend-v1"),
        (get_on(h, "/v2"), "infra-backend-v2"),
        (get_on(h, "/v2/example"), "infra-backend-v2"),
        (request("GET", h, "/", &[("version", "two")]), "infra-backend-v2"),
        (get_on(h, "/v2/"), "infra-backend-v2"),
        (get_on(h, "/v2example"), "infra-backend-v1"),
        (get_on(h, "/foo/v2/example"), "infra-backend-v1"),
    ])
    .await;
}

/// httproute-matching-across-routes: the same matches split over two routes with their own hostnames.
#[tokio::test]
async fn matching_across_routes() {
    let part1 = route(
        "matching-part1",
        "[example.com, example.net]",
        &format!(
            "[{{matches: [{{path: {{type: PathPrefix, value: /}}}}, {{headers: [{{name: version, value: one}}]}}], {}}}]",
            to("infra-backend-v1")
        ),
    );
    let part2 = route(
        "matching-part2",
        "[example.com]",
        &format!(
            "[{{matches: [{{path: {{type: PathPrefix, value: /v2}}}}, {{headers: [{{name: version, value: two}}]}}], {}}}]",
            to("infra-backend-v2")
        ),
    );
    let site = Conformance::start(&format!("{part1}{part2}")).await;
    site.expect_backends(&[
        (get_on("example.com", "/"), "infra-backend-v1"),
        (get_on("example.com", "/example"), "infra-backend-v1"),
        (get_on("example.net", "/example"), "infra-backend-v1"),
        (
            request("GET", "example.com", "/example", &[("version", "one")]),
            "infra-backend-v1",
        ),
        (get_on("example.com", "/v2"), "infra-backend-v2"),
        (get_on("example.net", "/v2"), "infra-backend-v1"),
        (get_on("example.com", "/v2/example"), "infra-backend-v2"),
        (
            request("GET", "example.com", "/", &[("version", "two")]),
            "infra-backend-v2",
        ),
    ])
    .await;
}

/// httproute-exact-path-matching: Exact `/one` and `/two`, nothing else.
#[tokio::test]
async fn exact_path_matching() {
    let rules = format!(
        "[{{matches: [{{path: {{type: Exact, value: /one}}}}], {}}}, {{matches: [{{path: {{type: Exact, value: /two}}}}], {}}}]",
        to("infra-backend-v1"),
        to("infra-backend-v2")
    );
    let site = Conformance::start(&route("exact-matching", "[]", &rules)).await;
    let h = "example.com";
    site.expect_backends(&[
        (get_on(h, "/one"), "infra-backend-v1"),
        (get_on(h, "/two"), "infra-backend-v2"),
    ])
    .await;
    expect_404(
        &site,
        vec![
            get_on(h, "/"),
            get_on(h, "/one/example"),
            get_on(h, "/two/"),
            get_on(h, "/Two"),
        ],
    )
    .await;
}

/// httproute-header-matching: one header, two headers (more wins), alternatives, and misses.
#[tokio::test]
async fn header_matching() {
    let header = |pairs: &[(&str, &str)]| {
        let list: Vec<String> = pairs
            .iter()
            .map(|(n, v)| format!("{{name: {n}, value: {v}}}"))
            .collect();
        format!("{{headers: [{}]}}", list.join(", "))
    };
    let rule = |matches: &[String], backend: &str| format!("{{matches: [{}], {}}}", matches.join(", "), to(backend));
    let rules = [
        rule(&[header(&[("version", "one")])], "infra-backend-v1"),
        rule(&[header(&[("version", "two")])], "infra-backend-v2"),
        rule(
            &[header(&[("version", "two"), ("color", "orange")])],
            "infra-backend-v1",
        ),
        rule(
            &[header(&[("color", "blue")]), header(&[("color", "green")])],
            "infra-backend-v1",
        ),
        rule(
            &[header(&[("color", "red")]), header(&[("color", "yellow")])],
            "infra-backend-v2",
        ),
    ];
    let site = Conformance::start(&route("header-matching", "[]", &format!("[{}]", rules.join(", ")))).await;
    let with = |headers: &[(&str, &str)]| request("GET", "example.com", "/", headers);
    site.expect_backends(&[
        (with(&[("Version", "one")]), "infra-backend-v1"),
        (with(&[("Version", "two")]), "infra-backend-v2"),
        (with(&[("Version", "two"), ("Color", "orange")]), "infra-backend-v1"),
        (with(&[("Version", "two"), ("Color", "blue")]), "infra-backend-v2"),
        (with(&[("Color", "blue")]), "infra-backend-v1"),
        (with(&[("Color", "green")]), "infra-backend-v1"),
        (with(&[("Color", "red")]), "infra-backend-v2"),
        (with(&[("Color", "yellow")]), "infra-backend-v2"),
    ])
    .await;
    expect_404(
        &site,
        vec![
            with(&[("Color", "orange")]),
            with(&[("Some-Other-Header", "one")]),
            with(&[("Color", "purple")]),
        ],
    )
    .await;
}

/// httproute-query-param-matching: its first rules (names are case-sensitive, more matches win).
#[tokio::test]
async fn query_param_matching() {
    let query = |pairs: &[(&str, &str)]| {
        let list: Vec<String> = pairs
            .iter()
            .map(|(n, v)| format!("{{name: {n}, value: {v}}}"))
            .collect();
        format!("{{queryParams: [{}]}}", list.join(", "))
    };
    let rule = |matches: &[String], backend: &str| format!("{{matches: [{}], {}}}", matches.join(", "), to(backend));
    let rules = [
        rule(&[query(&[("animal", "whale")])], "infra-backend-v1"),
        rule(&[query(&[("animal", "dolphin")])], "infra-backend-v2"),
        rule(
            &[
                query(&[("animal", "dolphin"), ("color", "blue")]),
                query(&[("ANIMAL", "Whale")]),
            ],
            "infra-backend-v3",
        ),
    ];
    let site = Conformance::start(&route("query-param-matching", "[]", &format!("[{}]", rules.join(", ")))).await;
    let h = "example.com";
    site.expect_backends(&[
        (get_on(h, "/?animal=whale"), "infra-backend-v1"),
        (get_on(h, "/?animal=dolphin"), "infra-backend-v2"),
        (get_on(h, "/?animal=dolphin&color=blue"), "infra-backend-v3"),
        (get_on(h, "/?ANIMAL=Whale"), "infra-backend-v3"),
        (get_on(h, "/?animal=whale&otherparam=irrelevant"), "infra-backend-v1"),
        (get_on(h, "/?animal=dolphin&color=yellow"), "infra-backend-v2"),
    ])
    .await;
    let misses = ["/?color=blue", "/?animal=dog", "/?animal=whaledolphin", "/"];
    expect_404(&site, misses.iter().map(|path| get_on(h, path)).collect()).await;
}

/// httproute-method-matching: POST to v1, GET to v2, HEAD to nothing.
#[tokio::test]
async fn method_matching() {
    let rules = format!(
        "[{{matches: [{{method: POST}}], {}}}, {{matches: [{{method: GET}}], {}}}]",
        to("infra-backend-v1"),
        to("infra-backend-v2")
    );
    let site = Conformance::start(&route("method-matching", "[]", &rules)).await;
    site.expect_backends(&[
        (request("POST", "example.com", "/", &[]), "infra-backend-v1"),
        (request("GET", "example.com", "/", &[]), "infra-backend-v2"),
    ])
    .await;
    expect_404(&site, vec![request("HEAD", "example.com", "/", &[])]).await;
}

/// httproute-path-match-order: Exact before any prefix, then the longest prefix (a trailing `/`
/// of a prefix ignored).
#[tokio::test]
async fn path_match_order() {
    let rule = |kind: &str, path: &str, backend: &str| {
        format!(
            "{{matches: [{{path: {{type: {kind}, value: {path}}}}}], {}}}",
            to(backend)
        )
    };
    let rules = [
        rule("Exact", "/match", "infra-backend-v1"),
        rule("Exact", "/match/exact", "infra-backend-v2"),
        rule("Exact", "/match/exact/one", "infra-backend-v3"),
        rule("PathPrefix", "/match/", "infra-backend-v3"),
        rule("PathPrefix", "/match/prefix/", "infra-backend-v1"),
        rule("PathPrefix", "/match/prefix/one", "infra-backend-v2"),
    ];
    let site = Conformance::start(&route("path-matching-order", "[]", &format!("[{}]", rules.join(", ")))).await;
    let h = "example.com";
    site.expect_backends(&[
        (get_on(h, "/match/exact/one"), "infra-backend-v3"),
        (get_on(h, "/match/exact"), "infra-backend-v2"),
        (get_on(h, "/match"), "infra-backend-v1"),
        (get_on(h, "/match/prefix/one/any"), "infra-backend-v2"),
        (get_on(h, "/match/prefix/any"), "infra-backend-v1"),
        (get_on(h, "/match/any"), "infra-backend-v3"),
    ])
    .await;
}
