//! Gateway listeners on other ports than 80 and 443, served on `--gateway-port` addresses.

use super::*;

/// The extra listeners [`listener_port_matching`] awaits.
const LISTENERS: &[&str] = &["http", "https", "admin", "gateway:8080", "gateway:8090"];

/// The suite's objects of httproute-listener-port-matching: listeners on 80, 8080 (foo.com,
/// bar.com) and 8090 (foo.com, bar.com), a route on each port (the last by sectionName too).
fn port_matching() -> String {
    let listener = |name: &str, port: u16, host: &str| {
        format!(
            "  - {{name: {name}, port: {port}, protocol: HTTP, hostname: {host}, allowedRoutes: {{namespaces: {{from: Same}}}}}}\n"
        )
    };
    let mut yaml = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: {INFRA}, name: httproute-listener-port-matching}}\n\
         spec:\n  gatewayClassName: shunt\n  listeners:\n"
    );
    for (name, port, host) in [
        ("listener-1", 80, "foo.com"),
        ("listener-2", 8080, "foo.com"),
        ("listener-3", 8080, "bar.com"),
        ("listener-4", 8090, "foo.com"),
        ("listener-5", 8090, "bar.com"),
    ] {
        yaml.push_str(&listener(name, port, host));
    }
    for (name, parent, backend) in [
        ("backend-v1", "port: 80", "infra-backend-v1"),
        ("backend-v2", "port: 8080", "infra-backend-v2"),
        ("backend-v3", "port: 8090, sectionName: listener-4", "infra-backend-v3"),
    ] {
        yaml.push_str(&format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
             metadata: {{namespace: {INFRA}, name: {name}}}\n\
             spec:\n  parentRefs: [{{name: httproute-listener-port-matching, namespace: {INFRA}, {parent}}}]\n\
             \x20 rules: [{{backendRefs: [{{name: {backend}, port: 8080}}]}}]\n"
        ));
    }
    yaml
}

/// httproute-listener-port-matching (HTTPRouteListenerPortMatching, feature
/// HTTPRouteParentRefPort): each port serves the route attached to its listeners only; a host
/// no route of that port serves is 404 there. The suite dials each port's address; here each
/// port is one `--gateway-port` address.
#[tokio::test]
async fn listener_port_matching() {
    let args = [
        "--gateway-port",
        "8080=127.0.0.1:0",
        "--gateway-port",
        "8090=127.0.0.1:0",
    ];
    let site = Conformance::start_with(&port_matching(), &args, LISTENERS).await;
    for route in ["backend-v1", "backend-v2", "backend-v3"] {
        assert_eq!(
            site.parent_conditions(route, "httproute-listener-port-matching").await,
            [
                condition("Accepted", "True", "Accepted"),
                condition("ResolvedRefs", "True", "ResolvedRefs")
            ],
            "{route}"
        );
    }
    let status = site.status().await;
    let features = status["gatewayClasses"][0]["supportedFeatures"]
        .as_array()
        .expect("features");
    assert!(features.contains(&json!("HTTPRouteParentRefPort")), "{features:?}");
    let (at_8080, at_8090) = (site.shunt.addr("gateway:8080"), site.shunt.addr("gateway:8090"));
    site.expect_backends(&[(get_on("foo.com", "/"), "infra-backend-v1")])
        .await;
    for (addr, host, backend) in [
        (at_8080, "foo.com:8080", "infra-backend-v2"),
        (at_8080, "bar.com:8080", "infra-backend-v2"),
        (at_8090, "foo.com:8090", "infra-backend-v3"),
    ] {
        let reply = site.shunt.send_at(addr, get_on(host, "/")).await;
        assert_eq!(reply.status, StatusCode::OK, "{host}: {}", reply.text());
        assert_eq!(reply.backend(), backend, "{host}");
    }
    let reply = site.shunt.send_at(at_8090, get_on("bar.com:8090", "/")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    // Port 80 serves none of the other ports' routes.
    assert_eq!(site.shunt.get("bar.com", "/").await.status, StatusCode::NOT_FOUND);
}

/// A listener on a port shunt has no address for is not accepted (the spec's
/// `PortUnavailable`), not programmed, and the route attached only there is not served.
#[tokio::test]
async fn a_port_without_an_address_is_unavailable() {
    let site = Conformance::start_with(
        &port_matching(),
        &["--gateway-port", "8090=127.0.0.1:0"],
        &["http", "https", "admin", "gateway:8090"],
    )
    .await;
    let status = site.status().await;
    let gateways = status["gateways"].as_array().expect("gateways");
    let gateway = gateways
        .iter()
        .find(|g| g["name"] == "httproute-listener-port-matching")
        .expect("the Gateway");
    let listener = &gateway["listeners"][1];
    assert_eq!(listener["name"], "listener-2");
    let conditions: Vec<(String, String, String)> = (listener["conditions"].as_array().expect("conditions"))
        .iter()
        .map(|c| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (text(&c["type"]), text(&c["status"]), text(&c["reason"]))
        })
        .collect();
    assert!(
        conditions.contains(&condition("Accepted", "False", "PortUnavailable")),
        "{conditions:?}"
    );
    assert!(
        conditions.contains(&condition("Programmed", "False", "Invalid")),
        "{conditions:?}"
    );
    let reply = site
        .shunt
        .send_at(site.shunt.addr("gateway:8090"), get_on("bar.com:8090", "/"))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    let reply = site
        .shunt
        .send_at(site.shunt.addr("gateway:8090"), get_on("foo.com:8090", "/"))
        .await;
    assert_eq!(reply.backend(), "infra-backend-v3");
}
