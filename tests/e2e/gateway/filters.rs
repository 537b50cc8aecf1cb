//! Filters: header modifiers, redirects and rewrites, each as its conformance test expects.

use http::{StatusCode, header::LOCATION};

use super::*;

/// One route of `gateway-conformance-infra` on `same-namespace`: a rule per `(prefix, filters,
/// backend)`, `filters` a flow list, no backend for a redirect.
fn route(name: &str, hostnames: &str, rules: &[(&str, &str, Option<&str>)]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|(prefix, filters, backend)| {
            let refs = backend.map_or(String::new(), |b| format!(", backendRefs: [{{name: {b}, port: 8080}}]"));
            format!("{{matches: [{{path: {{type: PathPrefix, value: {prefix}}}}}], filters: {filters}{refs}}}")
        })
        .collect();
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{parentRefs: [{{name: same-namespace}}], hostnames: {hostnames}, rules: [{}]}}\n",
        rules.join(", ")
    )
}

const V1: Option<&str> = Some("infra-backend-v1");

/// httproute-request-header-modifier: set overwrites, add appends, remove removes, names in any case.
#[tokio::test]
async fn request_header_modifier() {
    let modifier = |body: &str| format!("[{{type: RequestHeaderModifier, requestHeaderModifier: {{{body}}}}}]");
    let site = Conformance::start(&route(
        "request-header-modifier",
        "[]",
        &[
            (
                "/set",
                &modifier("set: [{name: X-Header-Set, value: set-overwrites-values}]"),
                V1,
            ),
            (
                "/add",
                &modifier("add: [{name: X-Header-Add, value: add-appends-values}]"),
                V1,
            ),
            ("/remove", &modifier("remove: [X-Header-Remove]"), V1),
        ],
    ))
    .await;
    let seen = |reply: &Reply, name: &str| reply.seen_header(name);
    let set = site
        .shunt
        .send(request(
            "GET",
            "example.com",
            "/set",
            &[("Some-Other-Header", "val"), ("X-Header-Set", "some-other-value")],
        ))
        .await;
    assert_eq!(seen(&set, "x-header-set").as_deref(), Some("set-overwrites-values"));
    assert_eq!(seen(&set, "some-other-header").as_deref(), Some("val"));
    let add = site
        .shunt
        .send(request(
            "GET",
            "example.com",
            "/add",
            &[("X-Header-Add", "some-other-value")],
        ))
        .await;
    assert_eq!(
        seen(&add, "x-header-add").as_deref(),
        Some("some-other-value, add-appends-values")
    );
    let remove = site
        .shunt
        .send(request(
            "GET",
            "example.com",
            "/remove",
            &[("X-Header-Remove", "val"), ("Keep", "1")],
        ))
        .await;
    assert_eq!(seen(&remove, "x-header-remove"), None);
    assert_eq!(seen(&remove, "keep").as_deref(), Some("1"));
}

/// httproute-response-header-modifier: the pod's answer edited (the echo pod's own field stands
/// in for the suite's `X-Header-Remove`).
#[tokio::test]
async fn response_header_modifier() {
    let modifier = |body: &str| format!("[{{type: ResponseHeaderModifier, responseHeaderModifier: {{{body}}}}}]");
    let site = Conformance::start(&route(
        "response-header-modifier",
        "[]",
        &[
            (
                "/set",
                &modifier("set: [{name: X-Header-Set, value: set-overwrites-values}]"),
                V1,
            ),
            (
                "/add",
                &modifier("add: [{name: X-UPPERCASE-ADD, value: uppercase-add}]"),
                V1,
            ),
            ("/remove", &modifier("remove: [Content-Type]"), V1),
        ],
    ))
    .await;
    let set = site.shunt.get("example.com", "/set").await;
    assert_eq!(
        set.headers.get("x-header-set").and_then(|v| v.to_str().ok()),
        Some("set-overwrites-values")
    );
    let add = site.shunt.get("example.com", "/add").await;
    assert_eq!(
        add.headers.get("x-uppercase-add").and_then(|v| v.to_str().ok()),
        Some("uppercase-add")
    );
    let remove = site.shunt.get("example.com", "/remove").await;
    assert_eq!(remove.status, StatusCode::OK);
    assert!(remove.headers.get("content-type").is_none(), "{:?}", remove.headers);
}

/// httproute-redirect-path, -redirect-host-and-status, -redirect-scheme, -redirect-port: the
/// `Location` and status of each of their rules.
#[tokio::test]
async fn redirects() {
    let redirect = |body: &str| format!("[{{type: RequestRedirect, requestRedirect: {{{body}}}}}]");
    let rules = [
        (
            "/original-prefix",
            redirect("path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}"),
        ),
        (
            "/full",
            redirect("path: {type: ReplaceFullPath, replaceFullPath: /full-path-replacement}"),
        ),
        (
            "/path-and-host",
            redirect(
                "hostname: example.org, path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}",
            ),
        ),
        (
            "/path-and-status",
            redirect("path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}, statusCode: 301"),
        ),
        ("/host-and-status", redirect("hostname: example.org, statusCode: 301")),
        ("/scheme-and-host", redirect("scheme: https, hostname: example.org")),
        ("/port-and-host", redirect("port: 8083, hostname: example.org")),
    ];
    let rules: Vec<(&str, &str, Option<&str>)> = rules.iter().map(|(p, f)| (*p, f.as_str(), None)).collect();
    let site = Conformance::start(&route("redirect-path", "[]", &rules)).await;
    let cases = [
        (
            "/original-prefix/lemon",
            302,
            "http://redirect.example/replacement-prefix/lemon",
        ),
        (
            "/full/path/original",
            302,
            "http://redirect.example/full-path-replacement",
        ),
        ("/path-and-host", 302, "http://example.org/replacement-prefix"),
        ("/path-and-status", 301, "http://redirect.example/replacement-prefix"),
        ("/host-and-status", 301, "http://example.org/host-and-status"),
        ("/scheme-and-host", 302, "https://example.org/scheme-and-host"),
        ("/port-and-host", 302, "http://example.org:8083/port-and-host"),
    ];
    for (path, status, location) in cases {
        let reply = site.shunt.get("redirect.example", path).await;
        assert_eq!(reply.status.as_u16(), status, "{path}");
        assert_eq!(
            reply.headers.get(LOCATION).and_then(|v| v.to_str().ok()),
            Some(location),
            "{path}"
        );
    }
}

/// httproute-rewrite-path: the path the pod sees, by prefix (to `/one`, to `/`) or whole.
#[tokio::test]
async fn rewrite_path() {
    let rewrite = |body: &str| format!("[{{type: URLRewrite, urlRewrite: {{path: {{{body}}}}}}}]");
    let site = Conformance::start(&route(
        "rewrite-path",
        "[]",
        &[
            (
                "/prefix/one",
                &rewrite("type: ReplacePrefixMatch, replacePrefixMatch: /one"),
                V1,
            ),
            (
                "/strip-prefix",
                &rewrite("type: ReplacePrefixMatch, replacePrefixMatch: /"),
                V1,
            ),
            (
                "/full/one",
                &rewrite("type: ReplaceFullPath, replaceFullPath: /one"),
                V1,
            ),
        ],
    ))
    .await;
    for (path, seen) in [
        ("/prefix/one/two", "/one/two"),
        ("/strip-prefix/three", "/three"),
        ("/strip-prefix", "/"),
        ("/full/one/two", "/one"),
    ] {
        let reply = site.shunt.get("example.com", path).await;
        assert_eq!(reply.json()["path_and_query"], seen, "{path}");
    }
}

/// httproute-rewrite-host: the Host the pod sees.
#[tokio::test]
async fn rewrite_host() {
    let rewrite = |host: &str| format!("[{{type: URLRewrite, urlRewrite: {{hostname: {host}}}}}]");
    let site = Conformance::start(&route(
        "rewrite-host",
        "[rewrite.example]",
        &[
            ("/one", &rewrite("one.example.org"), V1),
            ("/two", &rewrite("example.org"), Some("infra-backend-v2")),
        ],
    ))
    .await;
    let one = site.shunt.get("rewrite.example", "/one").await;
    assert_eq!(
        (one.backend(), one.seen_header("host")),
        ("infra-backend-v1".to_string(), Some("one.example.org".to_string()))
    );
    let two = site.shunt.get("rewrite.example", "/two").await;
    assert_eq!(
        (two.backend(), two.seen_header("host")),
        ("infra-backend-v2".to_string(), Some("example.org".to_string()))
    );
}

/// httproute-303-redirect, -307-redirect, -308-redirect: the extended status codes, the
/// request's URL kept.
#[tokio::test]
async fn redirect_status_codes() {
    let redirect = |code: u16| format!("[{{type: RequestRedirect, requestRedirect: {{statusCode: {code}}}}}]");
    let (see_other, temporary, permanent) = (redirect(303), redirect(307), redirect(308));
    let site = Conformance::start(&route(
        "redirect-codes",
        "[]",
        &[
            ("/see-other", &see_other, None),
            ("/temporary", &temporary, None),
            ("/permanent", &permanent, None),
        ],
    ))
    .await;
    for (path, status) in [("/see-other", 303), ("/temporary", 307), ("/permanent", 308)] {
        let reply = site.shunt.get("redirect.example", path).await;
        assert_eq!(reply.status.as_u16(), status, "{path}");
        let location = format!("http://redirect.example{path}");
        assert_eq!(
            reply.headers.get(LOCATION).and_then(|v| v.to_str().ok()),
            Some(location.as_str())
        );
    }
}

/// httproute-request-header-modifier-backend-weights: each backendRef's own filter edits only
/// the requests its share gets, so the pod sees its own name in `Backend`.
#[tokio::test]
async fn request_header_modifier_backend_weights() {
    let backend = |name: &str| {
        format!(
            "{{name: {name}, port: 8080, weight: 10, filters: [{{type: RequestHeaderModifier, \
             requestHeaderModifier: {{set: [{{name: Backend, value: {name}}}]}}}}]}}"
        )
    };
    let route = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {INFRA}, name: request-header-modifier-backend-weights}}\n\
         spec: {{parentRefs: [{{name: same-namespace}}], rules: [{{backendRefs: [{}, {}]}}]}}\n",
        backend("infra-backend-v1"),
        backend("infra-backend-v2")
    );
    let site = Conformance::start(&route).await;
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..100 {
        let reply = site.shunt.get("example.com", "/").await;
        let answered = reply.backend();
        assert_eq!(reply.seen_header("backend"), Some(answered.clone()));
        seen.insert(answered);
    }
    assert_eq!(seen.len(), 2, "both shares answered: {seen:?}");
}
