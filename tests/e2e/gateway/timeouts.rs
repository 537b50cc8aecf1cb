//! HTTPRoute `timeouts` (extended features HTTPRouteRequestTimeout and HTTPRouteBackendTimeout).
//! The suite's routes with its 500 ms deadlines scaled to 2 s and its 1 s delays to 3 s, so a
//! loaded test machine answers the quick requests well within the deadline.

use http::StatusCode;

use super::*;

fn route(name: &str, field: &str) -> String {
    let rule = |prefix: &str, value: &str| {
        format!(
            "{{matches: [{{path: {{type: PathPrefix, value: {prefix}}}}}], \
             backendRefs: [{{name: infra-backend-v1, port: 8080}}], timeouts: {{{field}: '{value}'}}}}"
        )
    };
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{parentRefs: [{{name: same-namespace}}], rules: [{}, {}]}}\n",
        rule("/timeout", "2s"),
        rule("/disable-timeout", "0s")
    )
}

/// Quick answers pass, a slow one past the deadline is 504, and `0s` sets none.
async fn deadline_answers(site: &Conformance) {
    site.expect_backends(&[
        (get_on("example.com", "/timeout"), "infra-backend-v1"),
        (get_on("example.com", "/disable-timeout?delay=3s"), "infra-backend-v1"),
    ])
    .await;
    assert_eq!(
        site.shunt.get("example.com", "/timeout?delay=3s").await.status,
        StatusCode::GATEWAY_TIMEOUT
    );
}

/// httproute-timeout-request: `timeouts.request`.
#[tokio::test]
async fn timeout_request() {
    let site = Conformance::start(&route("request-timeout", "request")).await;
    assert_eq!(
        site.parent_conditions("request-timeout", "same-namespace").await[1],
        condition("ResolvedRefs", "True", "ResolvedRefs")
    );
    deadline_answers(&site).await;
}

/// httproute-timeout-backend-request: `timeouts.backendRequest`.
#[tokio::test]
async fn timeout_backend_request() {
    let site = Conformance::start(&route("backend-request-timeout", "backendRequest")).await;
    assert_eq!(
        site.parent_conditions("backend-request-timeout", "same-namespace")
            .await[1],
        condition("ResolvedRefs", "True", "ResolvedRefs")
    );
    deadline_answers(&site).await;
}

/// A duration the CRD's pattern refuses is not served (`UnsupportedValue`).
#[tokio::test]
async fn a_malformed_duration_refuses_the_route() {
    let site = Conformance::start(&route("request-timeout", "request").replace("'2s'", "'2 seconds'")).await;
    assert_eq!(
        site.parent_conditions("request-timeout", "same-namespace").await[0],
        condition("Accepted", "False", "UnsupportedValue")
    );
    assert_eq!(
        site.shunt.get("example.com", "/timeout").await.status,
        StatusCode::NOT_FOUND
    );
}
