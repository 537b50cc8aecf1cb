//! Redirects by listener port and scheme, and HTTPS listeners on extra ports
//! (`--gateway-port`): a port's plain and TLS connections each see the routes of its HTTP or
//! HTTPS listeners.

use http::header::LOCATION;

use super::*;

const LISTENERS: &[&str] = &["http", "https", "admin", "gateway:8080", "gateway:8443"];
const ARGS: &[&str] = &[
    "--gateway-port",
    "8080=127.0.0.1:0",
    "--gateway-port",
    "8443=127.0.0.1:0",
];
const CERTIFICATE: &str = "tls: {certificateRefs: [{group: '', kind: Secret, name: tls-validity-checks-certificate}]}";

/// A Gateway of `INFRA` with one listener (a flow entry).
fn mk_gateway(name: &str, listener: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{gatewayClassName: shunt, listeners: [{listener}]}}\n"
    )
}

/// An HTTPRoute of `INFRA` on Gateway `parent`: one rule per `(prefix, redirect fields)`.
fn mk_redirects(name: &str, parent: &str, rules: &[(&str, &str)]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|(prefix, fields)| {
            format!(
                "{{matches: [{{path: {{type: PathPrefix, value: {prefix}}}}}], \
                 filters: [{{type: RequestRedirect, requestRedirect: {{{fields}, hostname: example.org}}}}]}}"
            )
        })
        .collect();
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{parentRefs: [{{name: {parent}}}], rules: [{}]}}\n",
        rules.join(", ")
    )
}

/// The objects of httproute-redirect-port-and-scheme (its Gateway on 8080 and the base's HTTPS
/// Gateway on 443, with the base's certificate), `extra` after them.
fn port_and_scheme(ca: &TestCa, extra: &str) -> String {
    let leaf = ca.issue(&["example.org", "second-example.org"]);
    let secret = to_yaml(&[mk_tls_secret(INFRA, "tls-validity-checks-certificate", &leaf)]);
    let https = format!(
        "{{name: https, port: 443, protocol: HTTPS, allowedRoutes: {{namespaces: {{from: Same}}}}, {CERTIFICATE}}}"
    );
    let on_8080 = "{name: http, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}";
    let nil = "scheme: null";
    [
        secret,
        mk_gateway("same-namespace-with-http-listener-on-8080", on_8080),
        mk_gateway("same-namespace-with-https-listener", &https),
        mk_redirects(
            "http-route-for-listener-on-port-80",
            "same-namespace",
            &[
                ("/scheme-nil-and-port-nil", nil),
                ("/scheme-nil-and-port-80", "port: 80"),
                ("/scheme-nil-and-port-8080", "port: 8080"),
                ("/scheme-https-and-port-nil", "scheme: https"),
                ("/scheme-https-and-port-443", "scheme: https, port: 443"),
                ("/scheme-https-and-port-8443", "scheme: https, port: 8443"),
            ],
        ),
        mk_redirects(
            "http-route-for-listener-on-port-8080",
            "same-namespace-with-http-listener-on-8080",
            &[
                ("/scheme-nil-and-port-nil", nil),
                ("/scheme-nil-and-port-80", "port: 80"),
                ("/scheme-https-and-port-nil", "scheme: https"),
            ],
        ),
        mk_redirects(
            "http-route-for-listener-on-port-443",
            "same-namespace-with-https-listener",
            &[
                ("/scheme-nil-and-port-nil", nil),
                ("/scheme-nil-and-port-443", "port: 443"),
                ("/scheme-nil-and-port-8443", "port: 8443"),
                ("/scheme-http-and-port-nil", "scheme: http"),
                ("/scheme-http-and-port-80", "scheme: http, port: 80"),
                ("/scheme-http-and-port-8080", "scheme: http, port: 8080"),
            ],
        ),
        extra.to_string(),
    ]
    .concat()
}

fn location(reply: &Reply) -> Option<&str> {
    reply.headers.get(LOCATION).and_then(|value| value.to_str().ok())
}

/// httproute-redirect-port-and-scheme (HTTPRouteRedirectPortAndScheme; features
/// HTTPRoutePortRedirect, HTTPRouteSchemeRedirect, GatewayPort8080): without a scheme or port
/// of its own a redirect keeps the listener's port (8080 written, 80 and 443 implied); a scheme
/// of its own takes that scheme's port. The suite sends the Gateway's address as Host on the
/// plain listeners and `example.org` (with SNI) on the HTTPS one.
#[tokio::test]
async fn redirect_port_and_scheme() {
    let ca = TestCa::new("gateway-ca");
    let site = Conformance::start_with(&port_and_scheme(&ca, ""), ARGS, LISTENERS).await;
    for route in [
        ("http-route-for-listener-on-port-80", "same-namespace"),
        (
            "http-route-for-listener-on-port-8080",
            "same-namespace-with-http-listener-on-8080",
        ),
        (
            "http-route-for-listener-on-port-443",
            "same-namespace-with-https-listener",
        ),
    ] {
        assert_eq!(
            site.parent_conditions(route.0, route.1).await,
            [
                condition("Accepted", "True", "Accepted"),
                condition("ResolvedRefs", "True", "ResolvedRefs")
            ],
            "{route:?}"
        );
    }
    let status = site.status().await;
    let features = status["gatewayClasses"][0]["supportedFeatures"]
        .as_array()
        .expect("features");
    for feature in ["GatewayPort8080", "HTTPRoutePortRedirect", "HTTPRouteSchemeRedirect"] {
        assert!(features.contains(&json!(feature)), "{feature}: {features:?}");
    }
    let on_80 = [
        ("/scheme-nil-and-port-nil", "http://example.org/scheme-nil-and-port-nil"),
        ("/scheme-nil-and-port-80", "http://example.org/scheme-nil-and-port-80"),
        (
            "/scheme-nil-and-port-8080",
            "http://example.org:8080/scheme-nil-and-port-8080",
        ),
        (
            "/scheme-https-and-port-nil",
            "https://example.org/scheme-https-and-port-nil",
        ),
        (
            "/scheme-https-and-port-443",
            "https://example.org/scheme-https-and-port-443",
        ),
        (
            "/scheme-https-and-port-8443",
            "https://example.org:8443/scheme-https-and-port-8443",
        ),
    ];
    let gateway_80 = site.shunt.http.to_string();
    for (path, expected) in on_80 {
        let reply = site.shunt.get(&gateway_80, path).await;
        assert_eq!(reply.status, StatusCode::FOUND, "{path}");
        assert_eq!(location(&reply), Some(expected), "80 {path}");
    }
    let at_8080 = site.shunt.addr("gateway:8080");
    let on_8080 = [
        (
            "/scheme-nil-and-port-nil",
            "http://example.org:8080/scheme-nil-and-port-nil",
        ),
        ("/scheme-nil-and-port-80", "http://example.org/scheme-nil-and-port-80"),
        (
            "/scheme-https-and-port-nil",
            "https://example.org/scheme-https-and-port-nil",
        ),
    ];
    for (path, expected) in on_8080 {
        let reply = site.shunt.send_at(at_8080, get_on(&at_8080.to_string(), path)).await;
        assert_eq!(reply.status, StatusCode::FOUND, "{path}");
        assert_eq!(location(&reply), Some(expected), "8080 {path}");
    }
    let client = ca.client();
    let on_443 = [
        (
            "/scheme-nil-and-port-nil",
            "https://example.org/scheme-nil-and-port-nil",
        ),
        (
            "/scheme-nil-and-port-443",
            "https://example.org/scheme-nil-and-port-443",
        ),
        (
            "/scheme-nil-and-port-8443",
            "https://example.org:8443/scheme-nil-and-port-8443",
        ),
        (
            "/scheme-http-and-port-nil",
            "http://example.org/scheme-http-and-port-nil",
        ),
        ("/scheme-http-and-port-80", "http://example.org/scheme-http-and-port-80"),
        (
            "/scheme-http-and-port-8080",
            "http://example.org:8080/scheme-http-and-port-8080",
        ),
    ];
    for (path, expected) in on_443 {
        let reply = client
            .send(site.shunt.https, Some("example.org"), get_on("example.org", path))
            .await;
        assert_eq!(reply.status, StatusCode::FOUND, "{path}");
        assert_eq!(location(&reply), Some(expected), "443 {path}");
    }
}

/// httproute-https-listener's routes served by an HTTPS listener on port 8443 (no upstream test
/// puts one on another port; shunt's own): TLS with the listener's certificate by SNI, the
/// route of an HTTP listener on the same port over plain connections only, and each kind's
/// routes invisible to the other. A scheme-less redirect there keeps 8443.
#[tokio::test]
async fn an_https_listener_on_an_extra_port_terminates_tls_with_its_certificate() {
    let ca = TestCa::new("gateway-ca");
    let https = format!("{{name: https, port: 8443, protocol: HTTPS, hostname: example.org, {CERTIFICATE}}}");
    let plain = "{name: http, port: 8443, protocol: HTTP, hostname: plain.example.org}";
    let route = |name: &str, parent: &str, backend: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
             metadata: {{namespace: {INFRA}, name: {name}}}\n\
             spec: {{parentRefs: [{{name: {parent}}}], rules: [\
               {{matches: [{{path: {{type: PathPrefix, value: /redirect}}}}], \
                 filters: [{{type: RequestRedirect, requestRedirect: {{hostname: example.org}}}}]}}, \
               {{backendRefs: [{{name: {backend}, port: 8080}}]}}]}}\n"
        )
    };
    let extra = [
        mk_gateway("https-on-8443", &https),
        mk_gateway("http-on-8443", plain),
        route("secure", "https-on-8443", "infra-backend-v1"),
        route("plain", "http-on-8443", "infra-backend-v2"),
    ]
    .concat();
    let site = Conformance::start_with(&port_and_scheme(&ca, &extra), ARGS, LISTENERS).await;
    assert_eq!(site.attached_routes("https-on-8443").await, [1]);
    let at_8443 = site.shunt.addr("gateway:8443");
    let client = ca.client();
    // The client trusts only the CA of the listener's Secret: a fallback certificate fails.
    let reply = client
        .send(at_8443, Some("example.org"), get_on("example.org", "/"))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.backend(), "infra-backend-v1");
    let reply = client
        .send(at_8443, Some("example.org"), get_on("example.org:8443", "/redirect"))
        .await;
    assert_eq!(location(&reply), Some("https://example.org:8443/redirect"));
    // The HTTP listener's route over plain connections only, and not the HTTPS one's.
    let reply = site.shunt.send_at(at_8443, get_on("plain.example.org", "/")).await;
    assert_eq!(reply.backend(), "infra-backend-v2");
    let reply = site.shunt.send_at(at_8443, get_on("example.org", "/")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    let reply = client
        .send(at_8443, Some("example.org"), get_on("plain.example.org", "/"))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    // Port 443 serves none of it.
    let reply = client
        .send(site.shunt.https, Some("example.org"), get_on("example.org", "/"))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}
