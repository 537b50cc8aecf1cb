//! Attachment: parentRefs, allowedRoutes, listener hostnames, and the reasons a parent gives.

use super::*;

const TO_V1: &str = "[{backendRefs: [{name: v1, port: 8080}]}]";

#[test]
fn a_route_of_the_gateways_namespace_is_accepted_and_served() {
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", TO_V1));
    let status = status(&compiled);
    assert_eq!(
        parent_conditions(&status, "web", "same"),
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    let paths = paths(&compiled.table, &exact("web.example.com"));
    assert_eq!(paths.len(), 1);
    assert_eq!(
        (paths[0].path.as_str(), paths[0].backend.as_str()),
        ("/", "infra/v1:8080")
    );
    assert_eq!(paths[0].options.listeners, shunt_spec::Listeners::Plain);
    assert_eq!(status["gatewayClasses"][0]["name"], "shunt");
    let same = status["gateways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "same")
        .unwrap()
        .clone();
    assert_eq!(same["listeners"][0]["attachedRoutes"], 1);
}

#[test]
fn a_route_of_another_namespace_is_not_allowed_by_a_same_namespace_listener() {
    let compiled = compiled(&mk_route("tenant", "web", "same", "[web.example.com]", TO_V1));
    let status = status(&compiled);
    assert_eq!(
        parent_conditions(&status, "web", "same")[0],
        condition("Accepted", "False", "NotAllowedByListeners")
    );
    assert!(paths(&compiled.table, &exact("web.example.com")).is_empty());
}

#[test]
fn a_section_name_or_port_no_listener_has_matches_no_parent() {
    let route = mk_route("infra", "web", "same", "[web.example.com]", TO_V1);
    for (field, value) in [("sectionName", "https"), ("port", "8080")] {
        let route = route.replace("namespace: infra}]", &format!("namespace: infra, {field}: {value}}}]"));
        let status = status(&compiled(&route));
        assert_eq!(
            parent_conditions(&status, "web", "same")[0],
            condition("Accepted", "False", "NoMatchingParent"),
            "{field}"
        );
    }
}

#[test]
fn a_hostname_outside_the_listeners_is_not_served() {
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: named}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, hostname: "*.example.com"}]
"#;
    let route = mk_route("infra", "web", "named", "[web.example.net]", TO_V1);
    let compiled = compiled(&format!("{gateway}{route}"));
    let status = status(&compiled);
    assert_eq!(
        parent_conditions(&status, "web", "named")[0],
        condition("Accepted", "False", "NoMatchingListenerHostname")
    );
    assert!(paths(&compiled.table, &exact("web.example.net")).is_empty());
}

#[test]
fn a_route_without_hostnames_takes_the_listeners_wildcard() {
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: named}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, hostname: "*.example.com"}]
"#;
    let compiled = compiled(&format!("{gateway}{}", mk_route("infra", "web", "named", "[]", TO_V1)));
    let wildcard = HostMatch::DeepWildcard("example.com".to_string());
    assert_eq!(paths(&compiled.table, &wildcard).len(), 1);
}

#[test]
fn listeners_shunt_cannot_serve_are_not_accepted_with_the_specs_reason() {
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: odd}
spec:
  gatewayClassName: shunt
  listeners:
  - {name: alt, port: 8080, protocol: HTTP}
  - {name: tcp, port: 9000, protocol: TCP}
  - {name: http, port: 80, protocol: HTTP}
  - {name: again, port: 80, protocol: HTTP}
"#;
    let status = status(&compiled(gateway));
    let odd = status["gateways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "odd")
        .unwrap()
        .clone();
    let listener = |at: usize| conditions(&odd["listeners"][at]["conditions"]);
    assert_eq!(listener(0)[0], condition("Accepted", "False", "PortUnavailable"));
    assert_eq!(listener(1)[0], condition("Accepted", "False", "UnsupportedProtocol"));
    assert_eq!(listener(2)[0], condition("Accepted", "True", "Accepted"));
    assert!(listener(3).contains(&condition("Conflicted", "True", "HostnameConflict")));
    assert!(listener(3).contains(&condition("Programmed", "False", "Invalid")));
    assert_eq!(
        conditions(&odd["conditions"])[0],
        condition("Accepted", "True", "ListenersNotValid")
    );
}

#[test]
fn another_controllers_class_and_its_gateways_are_left_alone() {
    let other = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.net/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: theirs}
spec:
  gatewayClassName: other
  listeners: [{name: http, port: 80, protocol: HTTP}]
"#;
    let compiled = compiled(&format!(
        "{other}{}",
        mk_route("infra", "web", "theirs", "[web.example.com]", TO_V1)
    ));
    let status = status(&compiled);
    assert_eq!(status["gatewayClasses"].as_array().unwrap().len(), 1);
    assert!(
        status["gateways"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["name"] != "theirs")
    );
    assert!(status["routes"].as_array().unwrap().is_empty());
    assert!(paths(&compiled.table, &exact("web.example.com")).is_empty());
}

#[test]
fn an_ingress_keeps_its_host_and_the_route_parent_says_so() {
    let ingress = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: infra, name: legacy}
spec:
  ingressClassName: shunt
  rules: [{host: web.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: v2, port: {number: 8080}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: shunt}
spec: {controller: shunt.dev/ingress-controller}
"#;
    let route = mk_route("infra", "web", "same", "[web.example.com, other.example.com]", TO_V1);
    let compiled = compiled(&format!("{ingress}{route}"));
    let held = paths(&compiled.table, &exact("web.example.com"));
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].backend, "infra/v2:8080");
    assert_eq!(paths(&compiled.table, &exact("other.example.com")).len(), 1);
    let conditions = parent_conditions(&status(&compiled), "web", "same");
    assert!(conditions.contains(&condition("shunt.dev/IngressConflict", "True", "HostnameHeldByIngress")));
    assert_eq!(conditions[0], condition("Accepted", "True", "Accepted"));
}

#[test]
fn a_namespace_selector_judges_the_namespaces_labels() {
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: selected}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {team: a}}}}}]
"#;
    let route = mk_route("infra", "web", "selected", "[web.example.com]", TO_V1);
    // No Namespace object (a manifest leaving it out): selected by nothing.
    let namespace = |team: &str| {
        format!("---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: infra, labels: {{team: {team}}}}}\n")
    };
    for (namespace, accepted) in [(String::new(), false), (namespace("b"), false), (namespace("a"), true)] {
        let compiled = compiled(&format!("{gateway}{route}{namespace}"));
        let expected = match accepted {
            true => condition("Accepted", "True", "Accepted"),
            false => condition("Accepted", "False", "NotAllowedByListeners"),
        };
        assert_eq!(
            parent_conditions(&status(&compiled), "web", "selected")[0],
            expected,
            "{namespace}"
        );
        assert_eq!(
            paths(&compiled.table, &exact("web.example.com")).is_empty(),
            !accepted,
            "{namespace}"
        );
    }
}

#[test]
fn a_route_is_not_served_through_a_listener_that_is_not_programmed() {
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: both}
spec:
  gatewayClassName: shunt
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: missing}]}}
"#;
    let compiled = compiled(&format!(
        "{gateway}{}",
        mk_route("infra", "web", "both", "[web.example.com]", TO_V1)
    ));
    // The HTTPS listener has no usable certificate: not programmed, so plain HTTP only.
    let paths = paths(&compiled.table, &exact("web.example.com"));
    assert_eq!(paths[0].options.listeners, shunt_spec::Listeners::Plain);
}

/// A route whose hostnames miss a listener's is not counted in its `attachedRoutes`
/// (httproute-hostname-intersection: "counted only if they are Accepted").
#[test]
fn attached_routes_count_only_routes_whose_hostnames_intersect() {
    let gateway = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
        metadata: {namespace: infra, name: hosts}\n\
        spec: {gatewayClassName: shunt, listeners: [{name: one, port: 80, protocol: HTTP, hostname: one.example.com}, \
        {name: any, port: 80, protocol: HTTP, hostname: '*.example.com'}]}\n";
    let routes = [
        mk_route("infra", "one", "hosts", "[one.example.com]", TO_V1),
        mk_route("infra", "two", "hosts", "[two.example.com]", TO_V1),
        mk_route("infra", "wrong", "hosts", "[wrong.example.org]", TO_V1),
    ];
    let status = status(&compiled(&format!("{gateway}{}", routes.concat())));
    let hosts = status["gateways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "hosts")
        .unwrap()
        .clone();
    assert_eq!(hosts["listeners"][0]["attachedRoutes"], 1, "one.example.com: route one");
    assert_eq!(
        hosts["listeners"][1]["attachedRoutes"], 2,
        "*.example.com: routes one and two"
    );
}
