//! Backends as the suite declares them: rules without backends, and Services whose endpoints
//! are not a plain selector's (headless, EndpointSlices written by hand), and rules with a name.

use http::StatusCode;

use super::*;

/// httproute-omitted-backendrefs: a rule with `backendRefs` omitted or empty answers 500; its
/// refs still count as resolved; the sibling rule is served.
#[tokio::test]
async fn omitted_backendrefs() {
    let route = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
        metadata: {namespace: gateway-conformance-infra, name: omitted-backendrefs}\n\
        spec: {parentRefs: [{name: same-namespace}], rules: [\
        {matches: [{path: {type: Exact, value: /omitted-no-forward}}]}, \
        {matches: [{path: {type: Exact, value: /empty-no-forward}}], backendRefs: []}, \
        {matches: [{path: {type: PathPrefix, value: /}}], backendRefs: [{name: infra-backend-v1, port: 8080}]}]}\n";
    let site = Conformance::start(route).await;
    assert_eq!(
        site.parent_conditions("omitted-backendrefs", "same-namespace").await,
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    site.expect_backends(&[(get_on("example.com", "/forward"), "infra-backend-v1")])
        .await;
    for path in ["/omitted-no-forward", "/empty-no-forward"] {
        assert_eq!(
            site.shunt.get("example.com", path).await.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{path}"
        );
    }
}

/// A Service of the suite's service-types test: port 8080 (`first-port`, target 3000), headless
/// or not, and an IPv4 EndpointSlice to `infra-backend-v1`'s pod (the suite writes the slices
/// of its manual Services from that pod's IPs) plus an IPv6 one left empty, as on an IPv4
/// cluster.
fn service_to(name: &str, headless: bool, port: u16) -> String {
    let cluster_ip = if headless { "clusterIP: None, " } else { "" };
    let slice = |family: &str, endpoints: &str| {
        format!(
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
             metadata: {{namespace: {INFRA}, name: {name}-{family}, labels: {{kubernetes.io/service-name: {name}}}}}\n\
             addressType: {family}\nports: [{{name: first-port, port: {port}, protocol: TCP}}]\nendpoints: {endpoints}\n"
        )
    };
    format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{{cluster_ip}ports: [{{name: first-port, protocol: TCP, port: 8080, targetPort: 3000}}]}}\n{}{}",
        slice("IPv4", "[{addresses: [127.0.0.1], conditions: {ready: true}}]"),
        slice("IPv6", "[]")
    )
}

/// httproute-service-types: a Service with hand-written EndpointSlices, a headless one, and a
/// headless one with hand-written slices all reach `infra-backend-v1`.
#[tokio::test]
async fn service_types() {
    let route = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
        metadata: {namespace: gateway-conformance-infra, name: service-types}\n\
        spec: {parentRefs: [{name: same-namespace}], rules: [\
        {matches: [{path: {type: Exact, value: /manual-endpointslices}}], backendRefs: [{name: manual-endpointslices, port: 8080}]}, \
        {matches: [{path: {type: Exact, value: /headless}}], backendRefs: [{name: headless, port: 8080}]}, \
        {matches: [{path: {type: Exact, value: /headless-manual-endpointslices}}], backendRefs: [{name: headless-manual-endpointslices, port: 8080}]}]}\n";
    let site = Conformance::start(route).await;
    let port = site.port_of("infra-backend-v1");
    let services = [
        service_to("manual-endpointslices", false, port),
        service_to("headless", true, port),
        service_to("headless-manual-endpointslices", true, port),
    ];
    site.rewrite(&format!("{route}{}", services.concat()));
    eventually(
        "the Services' endpoints",
        std::time::Duration::from_secs(10),
        async || {
            let reply = site.shunt.get("example.com", "/headless").await;
            (reply.status == StatusCode::OK).then_some(())
        },
    )
    .await;
    assert_eq!(
        site.parent_conditions("service-types", "same-namespace").await[1],
        condition("ResolvedRefs", "True", "ResolvedRefs")
    );
    site.expect_backends(&[
        (get_on("example.com", "/manual-endpointslices"), "infra-backend-v1"),
        (get_on("example.com", "/headless"), "infra-backend-v1"),
        (
            get_on("example.com", "/headless-manual-endpointslices"),
            "infra-backend-v1",
        ),
    ])
    .await;
}

/// httproute-named-rule: a named rule and an unnamed one, each served, the route accepted with
/// its references resolved and `HTTPRouteNamedRouteRule` claimed.
#[tokio::test]
async fn named_rule() {
    let route = format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: http-named-rules, namespace: {INFRA}}}\n\
         spec:\n  parentRefs: [{{name: same-namespace}}]\n  rules:\n\
         \x20 - name: named-rule\n    matches: [{{path: {{type: PathPrefix, value: /named}}}}]\n    backendRefs: [{{name: infra-backend-v1, port: 8080}}]\n\
         \x20 - matches: [{{path: {{type: PathPrefix, value: /unnamed}}}}]\n    backendRefs: [{{name: infra-backend-v2, port: 8080}}]\n"
    );
    let site = Conformance::start(&route).await;
    assert_eq!(
        site.parent_conditions("http-named-rules", "same-namespace").await,
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    site.expect_backends(&[
        (get_on("example.com", "/named"), "infra-backend-v1"),
        (get_on("example.com", "/unnamed"), "infra-backend-v2"),
    ])
    .await;
    let features = site.status().await["gatewayClasses"][0]["supportedFeatures"].take();
    assert!(
        features
            .as_array()
            .expect("features")
            .contains(&json!("HTTPRouteNamedRouteRule"))
    );
}
