//! Listeners on extra ports (`--gateway-port`): served only when shunt has an address for the
//! port, their routes on that port's hosts only (`TableSpec::ports`).

use super::*;

/// A Gateway `ports` in `infra` with listeners on 80 and 8080, both for `foo.com`, and a route
/// on each port (HTTPRoute `parentRefs.port`), as httproute-listener-port-matching sets up.
fn mk_ports() -> String {
    let gateway = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
        metadata: {namespace: infra, name: ports}\nspec:\n  gatewayClassName: shunt\n  listeners:\n\
        \x20 - {name: l80, port: 80, protocol: HTTP, hostname: foo.com}\n\
        \x20 - {name: l8080, port: 8080, protocol: HTTP, hostname: foo.com}\n";
    let route = |name: &str, port: u16, backend: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{namespace: infra, name: {name}}}\n\
             spec:\n  parentRefs: [{{name: ports, port: {port}}}]\n  rules: [{{backendRefs: [{{name: {backend}, port: 8080}}]}}]\n"
        )
    };
    format!("{gateway}{}{}", route("r80", 80, "v1"), route("r8080", 8080, "v2"))
}

fn listener_conditions(status: &Value, gateway: &str, listener: &str) -> Vec<(String, String, String)> {
    let gateways = status["gateways"].as_array().expect("gateways");
    let gateway = gateways
        .iter()
        .find(|entry| entry["name"] == gateway)
        .expect("the gateway");
    let listeners = gateway["listeners"].as_array().expect("listeners");
    let listener = listeners
        .iter()
        .find(|entry| entry["name"] == listener)
        .expect("the listener");
    conditions(&listener["conditions"])
}

#[test]
fn a_port_without_an_address_is_refused_and_its_routes_are_not_served() {
    let compiled = compiled(&mk_ports());
    let status = status(&compiled);
    let l8080 = listener_conditions(&status, "ports", "l8080");
    assert!(
        l8080.contains(&condition("Accepted", "False", "PortUnavailable")),
        "{l8080:?}"
    );
    assert!(
        l8080.contains(&condition("Programmed", "False", "Invalid")),
        "{l8080:?}"
    );
    assert!(compiled.table.ports.is_empty());
    let features = status["gatewayClasses"][0]["supportedFeatures"].as_array().unwrap();
    assert!(!features.contains(&"HTTPRouteParentRefPort".into()), "{features:?}");
    let paths = paths(&compiled.table, &exact("foo.com"));
    assert_eq!(
        paths.iter().map(|path| path.backend.as_str()).collect::<Vec<_>>(),
        ["infra/v1:8080"]
    );
}

#[test]
fn a_served_port_takes_only_the_routes_of_its_listeners() {
    let options = CompileOptions {
        gateway_ports: [8080].into(),
        ..CompileOptions::default()
    };
    let compiled = compile(&mk_state(&mk_ports()), &options);
    let status = status(&compiled);
    let l8080 = listener_conditions(&status, "ports", "l8080");
    assert!(l8080.contains(&condition("Accepted", "True", "Accepted")), "{l8080:?}");
    assert!(
        l8080.contains(&condition("Programmed", "True", "Programmed")),
        "{l8080:?}"
    );
    // Port 80's host serves r80 only; port 8080's serves r8080 only.
    let on_80 = paths(&compiled.table, &exact("foo.com"));
    assert_eq!(
        on_80.iter().map(|path| path.backend.as_str()).collect::<Vec<_>>(),
        ["infra/v1:8080"]
    );
    let port = &compiled.table.ports[&8080].0;
    assert_eq!(port.len(), 1);
    assert_eq!(port[0].host, exact("foo.com"));
    let backends: Vec<&str> = port[0].paths.iter().map(|path| path.backend.as_str()).collect();
    assert_eq!(backends, ["infra/v2:8080"]);
    assert!(compiled.table.backends.contains_key("infra/v2:8080"));
    let features = status["gatewayClasses"][0]["supportedFeatures"].as_array().unwrap();
    assert!(features.contains(&"HTTPRouteParentRefPort".into()), "{features:?}");
    assert!(
        features.windows(2).all(|pair| pair[0].as_str() < pair[1].as_str()),
        "sorted: {features:?}"
    );
    assert_eq!(
        parent_conditions(&status, "r8080", "ports")[0],
        condition("Accepted", "True", "Accepted")
    );
}
