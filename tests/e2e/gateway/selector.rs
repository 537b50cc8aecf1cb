//! Listeners that take routes from the namespaces a label selector picks
//! (`allowedRoutes.namespaces.from: Selector`), judged on the Namespace objects shunt reads.

use http::StatusCode;

use super::*;

/// The suite's namespaces as the API server labels them (`kubernetes.io/metadata.name`), plus
/// `team` labels for the relabelling test.
fn namespaces(infra_team: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Namespace\n\
         metadata: {{name: {INFRA}, labels: {{kubernetes.io/metadata.name: {INFRA}, team: {infra_team}}}}}\n\
         ---\napiVersion: v1\nkind: Namespace\n\
         metadata: {{name: {WEB}, labels: {{kubernetes.io/metadata.name: {WEB}}}}}\n"
    )
}

fn gateway(name: &str, hostname: Option<&str>, selector: &str) -> String {
    let hostname = hostname.map(|h| format!("hostname: {h}, ")).unwrap_or_default();
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{gatewayClassName: shunt, listeners: [{{name: http, port: 80, protocol: HTTP, {hostname}\
         allowedRoutes: {{kinds: [{{kind: HTTPRoute}}], namespaces: {{from: Selector, selector: {selector}}}}}}}]}}\n"
    )
}

fn route(namespace: &str, name: &str, gateway: &str, hostnames: &str, backend: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {namespace}, name: {name}}}\n\
         spec: {{hostnames: {hostnames}, parentRefs: [{{kind: Gateway, name: {gateway}, namespace: {INFRA}}}], \
         rules: [{{backendRefs: [{{name: {backend}, namespace: {namespace}, port: 8080}}]}}]}}\n"
    )
}

const BY_NAME: &str = "{matchLabels: {kubernetes.io/metadata.name: gateway-conformance-infra}}";

/// gateway-with-attached-routes (its Selector Gateways): a listener selecting the infra
/// namespace by its name label counts its one route, the other its two routes, and a route
/// whose hostname misses the listener's is not accepted (NoMatchingListenerHostname).
#[tokio::test]
async fn gateway_with_attached_routes() {
    let objects = [
        namespaces("blue"),
        gateway("gateway-with-one-attached-route", None, BY_NAME),
        route(
            INFRA,
            "http-route-1",
            "gateway-with-one-attached-route",
            "[]",
            "infra-backend-v1",
        ),
        gateway("gateway-with-two-attached-routes", Some("foo.example.com"), BY_NAME),
        route(
            INFRA,
            "http-route-2",
            "gateway-with-two-attached-routes",
            "[]",
            "infra-backend-v1",
        ),
        route(
            INFRA,
            "http-route-3",
            "gateway-with-two-attached-routes",
            "[]",
            "infra-backend-v1",
        ),
        route(
            INFRA,
            "http-route-not-accepted",
            "gateway-with-two-attached-routes",
            "[not-accepted.test.com]",
            "infra-backend-v1",
        ),
    ];
    let site = Conformance::start(&objects.concat()).await;
    assert_eq!(site.attached_routes("gateway-with-one-attached-route").await, [1]);
    assert_eq!(site.attached_routes("gateway-with-two-attached-routes").await, [2]);
    assert_eq!(
        site.parent_conditions("http-route-not-accepted", "gateway-with-two-attached-routes")
            .await[0],
        condition("Accepted", "False", "NoMatchingListenerHostname")
    );
    site.expect_backends(&[(get_on("foo.example.com", "/"), "infra-backend-v1")])
        .await;
}

/// A route from a namespace the selector does not pick is refused (NotAllowedByListeners)
/// and not served; matchExpressions are judged as the API machinery judges them.
#[tokio::test]
async fn unselected_namespace_is_not_allowed() {
    let selector = "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [gateway-conformance-web-backend]}]}";
    let objects = [
        namespaces("blue"),
        gateway("selective", Some("web.example.com"), selector),
        route(WEB, "from-web", "selective", "[web.example.com]", "web-backend"),
    ];
    let site = Conformance::start(&objects.concat()).await;
    assert_eq!(
        site.parent_conditions("from-web", "selective").await[0],
        condition("Accepted", "False", "NotAllowedByListeners")
    );
    assert_eq!(site.attached_routes("selective").await, [0]);
    assert_eq!(
        site.shunt.get("web.example.com", "/").await.status,
        StatusCode::NOT_FOUND
    );
}

/// Relabelling a Namespace re-judges the routes of it: `team: blue` attaches, `team: red`
/// detaches, and back.
#[tokio::test]
async fn relabelled_namespace_is_judged_again() {
    let objects = |team: &str| {
        [
            namespaces(team),
            gateway("team-blue", Some("blue.example.com"), "{matchLabels: {team: blue}}"),
            route(
                INFRA,
                "blue-route",
                "team-blue",
                "[blue.example.com]",
                "infra-backend-v2",
            ),
        ]
        .concat()
    };
    let site = Conformance::start(&objects("blue")).await;
    site.expect_backends(&[(get_on("blue.example.com", "/"), "infra-backend-v2")])
        .await;
    site.rewrite(&objects("red"));
    eventually("the route detached", std::time::Duration::from_secs(10), async || {
        (site.attached_routes("team-blue").await == [0]).then_some(())
    })
    .await;
    assert_eq!(
        site.parent_conditions("blue-route", "team-blue").await[0],
        condition("Accepted", "False", "NotAllowedByListeners")
    );
    assert_eq!(
        site.shunt.get("blue.example.com", "/").await.status,
        StatusCode::NOT_FOUND
    );
    site.rewrite(&objects("blue"));
    eventually(
        "the route attached again",
        std::time::Duration::from_secs(10),
        async || (site.attached_routes("team-blue").await == [1]).then_some(()),
    )
    .await;
    site.expect_backends(&[(get_on("blue.example.com", "/"), "infra-backend-v2")])
        .await;
}
