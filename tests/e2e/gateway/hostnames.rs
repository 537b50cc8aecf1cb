//! Route hostnames intersected with listener hostnames.

use http::StatusCode;

use super::*;

/// httproute-hostname-intersection: exact and wildcard hostnames on both sides; a route serves
/// only the intersection, each on its own path; a route intersecting no listener is not
/// accepted (NoMatchingListenerHostname) and not counted in `attachedRoutes`; a listener
/// without hostname takes the route's.
#[tokio::test]
async fn hostname_intersection() {
    let listener = |name: &str, host: &str| format!("{{name: {name}, port: 80, protocol: HTTP, hostname: '{host}'}}");
    let gateway = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: {INFRA}, name: httproute-hostname-intersection}}\n\
         spec: {{gatewayClassName: shunt, listeners: [{}, {}, {}]}}\n",
        listener("listener-1", "very.specific.com"),
        listener("listener-2", "*.wildcard.io"),
        listener("listener-3", "*.anotherwildcard.io")
    );
    let route = |name: &str, hostnames: &str, prefix: &str, backend: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
             metadata: {{namespace: {INFRA}, name: {name}}}\n\
             spec: {{parentRefs: [{{name: httproute-hostname-intersection}}], hostnames: {hostnames}, \
             rules: [{{matches: [{{path: {{type: PathPrefix, value: {prefix}}}}}], backendRefs: [{{name: {backend}, port: 8080}}]}}]}}\n"
        )
    };
    let routes = [
        route(
            "specific-specific",
            "[non.matching.com, '*.nonmatchingwildcard.io', very.specific.com]",
            "/s1",
            "infra-backend-v1",
        ),
        route(
            "specific-wildcard",
            "[non.matching.com, wildcard.io, foo.wildcard.io, bar.wildcard.io, foo.bar.wildcard.io]",
            "/s2",
            "infra-backend-v2",
        ),
        route(
            "wildcard-specific",
            "[non.matching.com, '*.specific.com']",
            "/s3",
            "infra-backend-v3",
        ),
        route(
            "wildcard-wildcard",
            "['*.anotherwildcard.io']",
            "/s4",
            "infra-backend-v1",
        ),
    ];
    let site = Conformance::start(&format!("{gateway}{}{UNSPECIFIED}", routes.concat())).await;
    site.expect_backends(&[
        (get_on("first.com", "/"), "infra-backend-v2"),
        (get_on("sub.first.com", "/"), "infra-backend-v2"),
        (get_on("second.com", "/"), "infra-backend-v2"),
        (get_on("sub.second.com", "/"), "infra-backend-v2"),
        (get_on("very.specific.com", "/s1"), "infra-backend-v1"),
        (get_on("very.specific.com:1234", "/s1"), "infra-backend-v1"),
        (get_on("foo.wildcard.io", "/s2"), "infra-backend-v2"),
        (get_on("bar.wildcard.io", "/s2"), "infra-backend-v2"),
        (get_on("foo.bar.wildcard.io", "/s2"), "infra-backend-v2"),
        (get_on("very.specific.com", "/s3"), "infra-backend-v3"),
        (get_on("foo.anotherwildcard.io", "/s4"), "infra-backend-v1"),
        (get_on("foo.bar.anotherwildcard.io", "/s4"), "infra-backend-v1"),
    ])
    .await;
    let misses = [
        ("non.matching.com", "/s1"),
        ("foo.nonmatchingwildcard.io", "/s1"),
        ("foo.wildcard.io", "/s1"),
        ("very.specific.com", "/non-matching-prefix"),
        ("wildcard.io", "/s2"),
        ("very.specific.com", "/s2"),
        ("foo.specific.com", "/s3"),
        ("anotherwildcard.io", "/s4"),
        ("very.specific.com", "/s4"),
        ("foo.wildcard.io", "/s3"),
        ("foo.wildcard.io", "/s4"),
        ("foo.anotherwildcard.io", "/non-matching-prefix"),
        ("specific.but.wrong.com", "/s5"),
        ("wildcard.io", "/s5"),
        ("third.com", "/"),
        ("sub.third.com", "/"),
    ];
    for (host, path) in misses {
        assert_eq!(
            site.shunt.get(host, path).await.status,
            StatusCode::NOT_FOUND,
            "{host}{path}"
        );
    }
    assert_eq!(
        site.parent_conditions("no-intersecting-hosts", "httproute-hostname-intersection")
            .await[0],
        condition("Accepted", "False", "NoMatchingListenerHostname")
    );
    assert_eq!(site.attached_routes("httproute-hostname-intersection").await, [2, 1, 1]);
}

/// The suite's route intersecting no listener, and its Gateway with a hostname-less listener.
const UNSPECIFIED: &str = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
    metadata: {namespace: gateway-conformance-infra, name: no-intersecting-hosts}\n\
    spec: {parentRefs: [{name: httproute-hostname-intersection}], hostnames: [specific.but.wrong.com, wildcard.io], \
    rules: [{matches: [{path: {type: PathPrefix, value: /s5}}], backendRefs: [{name: infra-backend-v2, port: 8080}]}]}\n\
    ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
    metadata: {namespace: gateway-conformance-infra, name: httproute-hostname-intersection-all}\n\
    spec: {gatewayClassName: shunt, listeners: [{name: listener-1, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}]}\n\
    ---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
    metadata: {namespace: gateway-conformance-infra, name: httproute-hostname-intersection-all}\n\
    spec: {parentRefs: [{name: httproute-hostname-intersection-all}], \
    hostnames: [first.com, sub.first.com, second.com, sub.second.com], rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]}\n";

/// Editing a route's file re-routes without a restart (the layer is compiled again whole).
#[tokio::test]
async fn an_edited_route_is_served_after_the_files_next_poll() {
    let route = |backend: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
             metadata: {{namespace: {INFRA}, name: moving}}\n\
             spec: {{parentRefs: [{{name: same-namespace}}], hostnames: [moving.example.com], \
             rules: [{{backendRefs: [{{name: {backend}, port: 8080}}]}}]}}\n"
        )
    };
    let site = Conformance::start(&route("infra-backend-v1")).await;
    site.expect_backends(&[(get_on("moving.example.com", "/"), "infra-backend-v1")])
        .await;
    site.rewrite(&route("infra-backend-v2"));
    eventually("the edited route", std::time::Duration::from_secs(10), async || {
        let reply = site.shunt.get("moving.example.com", "/").await;
        (reply.status == StatusCode::OK && reply.backend() == "infra-backend-v2").then_some(())
    })
    .await;
}
