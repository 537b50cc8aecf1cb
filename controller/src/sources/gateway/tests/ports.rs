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
    let compiled = compiled_on(&[8080], &mk_ports());
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

/// A Gateway `tls` in `infra` whose listeners are `listeners` (flow entries).
fn mk_gateway(listeners: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: infra, name: tls}}\nspec: {{gatewayClassName: shunt, listeners: [{listeners}]}}\n"
    )
}

fn compiled_on(ports: &[u16], manifests: &str) -> Compiled {
    let options = CompileOptions {
        gateway_ports: ports.iter().copied().collect(),
        ..CompileOptions::default()
    };
    compile(&mk_state(manifests), &options)
}

#[test]
fn an_https_listener_on_a_served_port_is_accepted_and_needs_its_certificate() {
    let https = "{name: s8443, port: 8443, protocol: HTTPS, tls: {certificateRefs: [{name: missing}]}}";
    let served = status(&compiled_on(&[8443], &mk_gateway(https)));
    let listener = listener_conditions(&served, "tls", "s8443");
    assert!(
        listener.contains(&condition("Accepted", "True", "Accepted")),
        "{listener:?}"
    );
    // Its certificate is read as on 443: a missing Secret is the spec's reason.
    assert!(
        listener.contains(&condition("ResolvedRefs", "False", "InvalidCertificateRef")),
        "{listener:?}"
    );
    let unserved = status(&compiled_on(&[], &mk_gateway(https)));
    let listener = listener_conditions(&unserved, "tls", "s8443");
    assert!(
        listener.contains(&condition("Accepted", "False", "PortUnavailable")),
        "{listener:?}"
    );
}

#[test]
fn http_and_https_listeners_on_one_port_of_one_gateway_conflict() {
    let listeners = "{name: plain, port: 8443, protocol: HTTP}, {name: secure, port: 8443, protocol: HTTPS, \
                     hostname: other.com, tls: {certificateRefs: [{name: missing}]}}";
    let status = status(&compiled_on(&[8443], &mk_gateway(listeners)));
    let plain = listener_conditions(&status, "tls", "plain");
    assert!(
        plain.contains(&condition("Conflicted", "False", "NoConflicts")),
        "{plain:?}"
    );
    let secure = listener_conditions(&status, "tls", "secure");
    assert!(
        secure.contains(&condition("Conflicted", "True", "ProtocolConflict")),
        "{secure:?}"
    );
    assert!(
        secure.contains(&condition("Programmed", "False", "Invalid")),
        "{secure:?}"
    );
}
