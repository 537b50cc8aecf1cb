//! References across namespaces, references that do not resolve, listener hostnames and
//! kinds, weights, and the status served at `/gateway`.

use std::collections::BTreeMap;

use http::StatusCode;

use super::*;

fn route(namespace: &str, name: &str, parents: &str, hostnames: &str, rules: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {namespace}, name: {name}}}\n\
         spec: {{parentRefs: {parents}, hostnames: {hostnames}, rules: {rules}}}\n"
    )
}

const SAME: &str = "[{name: same-namespace, namespace: gateway-conformance-infra}]";
const TO_WEB: &str = "[{backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]}]";
const GRANT: &str = "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\n\
    metadata: {namespace: gateway-conformance-web-backend, name: reference-grant}\n\
    spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: gateway-conformance-infra}], \
    to: [{group: '', kind: Service, name: web-backend}]}\n";

/// httproute-cross-namespace: a route in the backend's namespace attached to a Gateway of
/// another that takes every namespace's routes (the suite's Gateway selects namespaces by
/// label, which shunt does not read yet: `all-namespaces` stands in).
#[tokio::test]
async fn cross_namespace() {
    let parents = "[{name: all-namespaces, namespace: gateway-conformance-infra}]";
    let site = Conformance::start(&route(
        WEB,
        "cross-namespace",
        parents,
        "[]",
        "[{backendRefs: [{name: web-backend, port: 8080}]}]",
    ))
    .await;
    site.expect_backends(&[(get_on("example.com", "/"), "web-backend")])
        .await;
    assert_eq!(
        site.parent_conditions("cross-namespace", "all-namespaces").await[0],
        condition("Accepted", "True", "Accepted")
    );
}

/// httproute-reference-grant and httproute-invalid-cross-namespace-backend-ref: another
/// namespace's Service only with a ReferenceGrant; without one, 500 and RefNotPermitted.
#[tokio::test]
async fn reference_grant() {
    let granted = Conformance::start(&format!(
        "{GRANT}{}",
        route(INFRA, "reference-grant", SAME, "[]", TO_WEB)
    ))
    .await;
    granted
        .expect_backends(&[(get_on("example.com", "/"), "web-backend")])
        .await;

    let refused = Conformance::start(&route(INFRA, "invalid-cross-namespace-backend-ref", SAME, "[]", TO_WEB)).await;
    assert_eq!(
        refused.shunt.get("example.com", "/").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert_eq!(
        refused
            .parent_conditions("invalid-cross-namespace-backend-ref", "same-namespace")
            .await[1],
        condition("ResolvedRefs", "False", "RefNotPermitted")
    );
}

/// httproute-invalid-nonexistent-backendref and httproute-invalid-backendref-unknown-kind:
/// 500, with BackendNotFound and InvalidKind.
#[tokio::test]
async fn unresolved_backends_answer_500() {
    let nonexistent = route(
        INFRA,
        "invalid-nonexistent-backend-ref",
        SAME,
        "[a.example.com]",
        "[{backendRefs: [{name: nonexistent, port: 8080}]}]",
    );
    let unknown = route(
        INFRA,
        "invalid-backend-ref-unknown-kind",
        SAME,
        "[b.example.com]",
        "[{backendRefs: [{group: unknownkind.example.com, kind: NonExistent, name: infra-backend-v1, port: 8080}]}]",
    );
    let site = Conformance::start(&format!("{nonexistent}{unknown}")).await;
    for host in ["a.example.com", "b.example.com"] {
        assert_eq!(
            site.shunt.get(host, "/").await.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{host}"
        );
    }
    assert_eq!(
        site.parent_conditions("invalid-nonexistent-backend-ref", "same-namespace")
            .await[1],
        condition("ResolvedRefs", "False", "BackendNotFound")
    );
    assert_eq!(
        site.parent_conditions("invalid-backend-ref-unknown-kind", "same-namespace")
            .await[1],
        condition("ResolvedRefs", "False", "InvalidKind")
    );
}

/// httproute-disallowed-kind: a listener taking TLSRoutes only refuses an HTTPRoute.
#[tokio::test]
async fn disallowed_kind() {
    let gateway = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
        metadata: {namespace: gateway-conformance-infra, name: tlsroutes-only}\n\
        spec: {gatewayClassName: shunt, listeners: [{name: tls, port: 443, protocol: TLS, tls: {mode: Passthrough}, \
        allowedRoutes: {namespaces: {from: Same}, kinds: [{kind: TLSRoute}]}}]}\n";
    let parents = "[{name: tlsroutes-only, namespace: gateway-conformance-infra}]";
    let site = Conformance::start(&format!(
        "{gateway}{}",
        route(
            INFRA,
            "disallowed-kind",
            parents,
            "[]",
            "[{backendRefs: [{name: infra-backend-v1, port: 8080}]}]"
        )
    ))
    .await;
    assert_eq!(
        site.parent_conditions("disallowed-kind", "tlsroutes-only").await[0],
        condition("Accepted", "False", "NotAllowedByListeners")
    );
    assert_eq!(site.shunt.get("example.com", "/").await.status, StatusCode::NOT_FOUND);
}

/// httproute-listener-hostname-matching: four listeners on port 80 told apart by hostname.
#[tokio::test]
async fn listener_hostname_matching() {
    let listener = |name: &str, host: &str| format!("{{name: {name}, port: 80, protocol: HTTP, hostname: '{host}'}}");
    let gateway = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: gateway-conformance-infra, name: hostnames}}\n\
         spec: {{gatewayClassName: shunt, listeners: [{}, {}, {}, {}]}}\n",
        listener("listener-1", "bar.com"),
        listener("listener-2", "foo.bar.com"),
        listener("listener-3", "*.bar.com"),
        listener("listener-4", "*.foo.com")
    );
    let parent = |section: &str| format!("{{name: hostnames, sectionName: {section}}}");
    let to = |backend: &str| format!("[{{backendRefs: [{{name: {backend}, port: 8080}}]}}]");
    let routes = [
        route(
            INFRA,
            "backend-v1",
            &format!("[{}]", parent("listener-1")),
            "[]",
            &to("infra-backend-v1"),
        ),
        route(
            INFRA,
            "backend-v2",
            &format!("[{}]", parent("listener-2")),
            "[]",
            &to("infra-backend-v2"),
        ),
        route(
            INFRA,
            "backend-v3",
            &format!("[{}, {}]", parent("listener-3"), parent("listener-4")),
            "[]",
            &to("infra-backend-v3"),
        ),
    ];
    let site = Conformance::start(&format!("{gateway}{}", routes.concat())).await;
    site.expect_backends(&[
        (get_on("bar.com", "/"), "infra-backend-v1"),
        (get_on("foo.bar.com", "/"), "infra-backend-v2"),
        (get_on("baz.bar.com", "/"), "infra-backend-v3"),
        (get_on("boo.bar.com", "/"), "infra-backend-v3"),
        (get_on("multiple.prefixes.bar.com", "/"), "infra-backend-v3"),
        (get_on("multiple.prefixes.foo.com", "/"), "infra-backend-v3"),
    ])
    .await;
    for host in ["foo.com", "no.matching.host"] {
        assert_eq!(site.shunt.get(host, "/").await.status, StatusCode::NOT_FOUND, "{host}");
    }
}

/// httproute-weight: 70/30/0 over three backends; the one of weight 0 never answers. (The suite
/// checks the shares within a tolerance; here both weighted ones answer some of 200.)
#[tokio::test]
async fn weight() {
    let rules = "[{backendRefs: [{name: infra-backend-v1, port: 8080, weight: 70}, {name: infra-backend-v2, port: 8080, weight: 30}, {name: infra-backend-v3, port: 8080, weight: 0}]}]";
    let site = Conformance::start(&route(INFRA, "weighted-backends", SAME, "[]", rules)).await;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..200 {
        *seen
            .entry(site.shunt.get("example.com", "/").await.backend())
            .or_default() += 1;
    }
    assert!(!seen.contains_key("infra-backend-v3"), "{seen:?}");
    assert!(
        seen.contains_key("infra-backend-v1") && seen.contains_key("infra-backend-v2"),
        "{seen:?}"
    );
}

/// The document at `/gateway`: every name in it as operators read it.
#[tokio::test]
async fn the_status_is_served_at_gateway() {
    let site = Conformance::start(&route(
        INFRA,
        "web",
        SAME,
        "[]",
        "[{backendRefs: [{name: infra-backend-v1, port: 8080}]}]",
    ))
    .await;
    let mut status = site.status().await;
    // What the GatewayClass's status would claim, as the API names it (checked in `ports.rs`).
    let features = status["gatewayClasses"][0]["supportedFeatures"].take();
    assert!(
        features
            .as_array()
            .expect("supportedFeatures")
            .contains(&json!("HTTPRoute"))
    );
    assert_eq!(
        status["gatewayClasses"],
        json!([{"name": "shunt", "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}], "supportedFeatures": null}])
    );
    let gateways = status["gateways"].as_array().expect("gateways");
    let same = gateways
        .iter()
        .find(|g| g["name"] == "same-namespace")
        .expect("same-namespace");
    assert_eq!(same["namespace"], INFRA);
    assert_eq!(same["listeners"][0]["name"], "http");
    assert_eq!(same["listeners"][0]["attachedRoutes"], 1);
    assert_eq!(
        same["conditions"][1],
        json!({"type": "Programmed", "status": "True", "reason": "Programmed"})
    );
    assert_eq!(
        status["routes"],
        json!([{
            "kind": "HTTPRoute", "namespace": INFRA, "name": "web",
            "parents": [{
                "parentRef": {"name": "same-namespace", "namespace": INFRA},
                "conditions": [
                    {"type": "Accepted", "status": "True", "reason": "Accepted"},
                    {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs"},
                ],
            }],
        }])
    );
}

/// httproute-invalid-parentref-not-matching-section-name, -not-matching-listener-port and
/// -section-name-not-matching-port: a parentRef no listener matches is not accepted
/// (`NoMatchingParent`), and nothing is served.
#[tokio::test]
async fn parent_refs_matching_no_listener() {
    let to = "[{backendRefs: [{name: infra-backend-v1, kind: Service, port: 8080}]}]";
    let parent = |extra: &str| format!("[{{name: same-namespace, namespace: gateway-conformance-infra, {extra}}}]");
    let routes = [
        route(
            INFRA,
            "not-matching-section-name",
            &parent("port: 80, sectionName: http1"),
            "[a.example.com]",
            to,
        ),
        route(
            INFRA,
            "not-matching-route-port",
            &parent("port: 81"),
            "[b.example.com]",
            to,
        ),
        route(
            INFRA,
            "section-name-not-matching-port",
            &parent("sectionName: http, port: 81"),
            "[c.example.com]",
            to,
        ),
    ];
    let site = Conformance::start(&routes.concat()).await;
    for (name, host) in [
        ("not-matching-section-name", "a.example.com"),
        ("not-matching-route-port", "b.example.com"),
        ("section-name-not-matching-port", "c.example.com"),
    ] {
        assert_eq!(
            site.parent_conditions(name, "same-namespace").await[0],
            condition("Accepted", "False", "NoMatchingParent"),
            "{name}"
        );
        assert_eq!(site.shunt.get(host, "/").await.status, StatusCode::NOT_FOUND, "{host}");
    }
}

/// httproute-invalid-reference-grant: grants that miss by one field (their namespace, the
/// from group, kind or namespace, the to group, kind or name) permit nothing: 500 and
/// RefNotPermitted.
#[tokio::test]
async fn reference_grants_that_miss_permit_nothing() {
    let grant = |namespace: &str, name: &str, from: (&str, &str, &str), to: (&str, &str, &str)| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\n\
             metadata: {{namespace: {namespace}, name: {name}}}\n\
             spec: {{from: [{{group: '{}', kind: {}, namespace: {}}}], to: [{{group: '{}', kind: {}, name: {}}}]}}\n",
            from.0, from.1, from.2, to.0, to.1, to.2
        )
    };
    let route_from = ("gateway.networking.k8s.io", "HTTPRoute", INFRA);
    let service = ("", "Service", "web-backend");
    let grants = [
        grant(INFRA, "wrong-namespace", route_from, service),
        grant(WEB, "wrong-from-group", ("not-the-group", "HTTPRoute", INFRA), service),
        grant(
            WEB,
            "wrong-from-kind",
            ("gateway.networking.k8s.io", "Gateway", INFRA),
            service,
        ),
        grant(
            WEB,
            "wrong-from-namespace",
            ("gateway.networking.k8s.io", "HTTPRoute", "elsewhere"),
            service,
        ),
        grant(
            WEB,
            "wrong-to-group",
            route_from,
            ("not-the-group", "Service", "web-backend"),
        ),
        grant(WEB, "wrong-to-kind", route_from, ("", "Secret", "web-backend")),
        grant(WEB, "wrong-to-name", route_from, ("", "Service", "not-web-backend")),
    ];
    let site = Conformance::start(&format!(
        "{}{}",
        grants.concat(),
        route(INFRA, "reference-grant", SAME, "[]", TO_WEB)
    ))
    .await;
    assert_eq!(
        site.shunt.get("example.com", "/").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert_eq!(
        site.parent_conditions("reference-grant", "same-namespace").await[1],
        condition("ResolvedRefs", "False", "RefNotPermitted")
    );
}
