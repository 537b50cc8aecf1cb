//! Routes and their parents: several Gateways sharing a route, a parentRef the listener does
//! not allow, and a rule whose backend is refused next to one that resolves.

use http::StatusCode;

use super::*;

fn route(namespace: &str, name: &str, parents: &str, rules: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {namespace}, name: {name}}}\n\
         spec: {{parentRefs: {parents}, rules: {rules}}}\n"
    )
}

fn prefix_to(prefix: &str, backend: &str) -> String {
    format!(
        "{{matches: [{{path: {{type: PathPrefix, value: {prefix}}}}}], backendRefs: [{{name: {backend}, port: 8080}}]}}"
    )
}

/// httproute-multiple-gateways: one route on both Gateways, each with a dedicated route of
/// its own. Both Gateways share shunt's port 80 here, where the suite reaches each at an address
/// of its own: the two dedicated `/` routes meet on the catch-all host, and the spec's
/// precedence (same age, then `namespace/name`) gives `/` to `all-namespaces-dedicated-route`.
/// The status shows every route accepted by its Gateways.
#[tokio::test]
async fn multiple_gateways() {
    let routes = [
        route(
            INFRA,
            "multiple-gateways-shared-route",
            "[{name: same-namespace}, {name: all-namespaces}]",
            &format!("[{}]", prefix_to("/shared", "infra-backend-v1")),
        ),
        route(
            INFRA,
            "same-namespace-dedicated-route",
            "[{name: same-namespace}]",
            &format!("[{}]", prefix_to("/", "infra-backend-v2")),
        ),
        route(
            INFRA,
            "all-namespaces-dedicated-route",
            "[{name: all-namespaces}]",
            &format!("[{}]", prefix_to("/", "infra-backend-v3")),
        ),
    ];
    let site = Conformance::start(&routes.concat()).await;
    site.expect_backends(&[
        (get_on("example.com", "/shared"), "infra-backend-v1"),
        (get_on("example.com", "/"), "infra-backend-v3"),
    ])
    .await;
    let parents = [
        ("multiple-gateways-shared-route", "same-namespace"),
        ("multiple-gateways-shared-route", "all-namespaces"),
        ("same-namespace-dedicated-route", "same-namespace"),
        ("all-namespaces-dedicated-route", "all-namespaces"),
    ];
    for (route, gateway) in parents {
        assert_eq!(
            site.parent_conditions(route, gateway).await,
            [
                condition("Accepted", "True", "Accepted"),
                condition("ResolvedRefs", "True", "ResolvedRefs")
            ],
            "{route} on {gateway}"
        );
    }
    assert_eq!(site.attached_routes("same-namespace").await, [2]);
    assert_eq!(site.attached_routes("all-namespaces").await, [2]);
}

/// httproute-invalid-cross-namespace-parent-ref: a route of another namespace naming a
/// `Same` Gateway is not accepted (NotAllowedByListeners), its refs still resolve, the Gateway
/// counts no route, and nothing is served.
#[tokio::test]
async fn invalid_cross_namespace_parent_ref() {
    let site = Conformance::start(&route(
        WEB,
        "invalid-cross-namespace-parent-ref",
        "[{name: same-namespace, namespace: gateway-conformance-infra}]",
        "[{backendRefs: [{name: web-backend, port: 8080}]}]",
    ))
    .await;
    assert_eq!(
        site.parent_conditions("invalid-cross-namespace-parent-ref", "same-namespace")
            .await,
        [
            condition("Accepted", "False", "NotAllowedByListeners"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    assert_eq!(site.attached_routes("same-namespace").await, [0]);
    assert_eq!(site.shunt.get("example.com", "/").await.status, StatusCode::NOT_FOUND);
}

/// httproute-partially-invalid-via-invalid-reference-grant: a ReferenceGrant covering only
/// `app-backend-v1`; the rule to `app-backend-v2` answers 500 (RefNotPermitted), its sibling
/// rule is served.
#[tokio::test]
async fn partially_invalid_via_invalid_reference_grant() {
    let grant = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: ReferenceGrant\n\
        metadata: {namespace: gateway-conformance-app-backend, name: invalid-reference-grant}\n\
        spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: gateway-conformance-infra}], \
        to: [{group: '', kind: Service, name: app-backend-v1}]}\n";
    let to = |backend: &str| format!("[{{name: {backend}, namespace: {APP}, port: 8080}}]");
    let rules = format!(
        "[{{matches: [{{path: {{type: PathPrefix, value: /v2}}}}], backendRefs: {}}}, {{backendRefs: {}}}]",
        to("app-backend-v2"),
        to("app-backend-v1")
    );
    let site = Conformance::start(&format!(
        "{grant}{}",
        route(INFRA, "invalid-reference-grant", "[{name: same-namespace}]", &rules)
    ))
    .await;
    assert_eq!(
        site.parent_conditions("invalid-reference-grant", "same-namespace")
            .await,
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "False", "RefNotPermitted")
        ]
    );
    assert_eq!(
        site.shunt.get("example.com", "/v2").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    site.expect_backends(&[(get_on("example.com", "/"), "app-backend-v1")])
        .await;
}

/// httproute-observed-generation-bump: an edit that bumps the route's generation (here written
/// in the manifest, as the API server would set it) is observed: the route's status carries
/// the new generation, still accepted with its refs resolved, and the edit is served.
#[tokio::test]
async fn observed_generation_bump() {
    let route = |generation: u32, backend: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
             metadata: {{namespace: {INFRA}, name: observed-generation-bump, generation: {generation}}}\n\
             spec: {{parentRefs: [{{name: same-namespace}}], rules: [{{backendRefs: [{{name: {backend}, port: 8080}}]}}]}}\n"
        )
    };
    let site = Conformance::start(&route(1, "infra-backend-v1")).await;
    let generation = async || {
        let status = site.status().await;
        status["routes"][0]["observedGeneration"].as_i64()
    };
    assert_eq!(generation().await, Some(1));
    site.rewrite(&route(2, "infra-backend-v2"));
    eventually(
        "the new generation observed",
        std::time::Duration::from_secs(10),
        async || (generation().await == Some(2)).then_some(()),
    )
    .await;
    assert_eq!(
        site.parent_conditions("observed-generation-bump", "same-namespace")
            .await,
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    site.expect_backends(&[(get_on("example.com", "/"), "infra-backend-v2")])
        .await;
}
