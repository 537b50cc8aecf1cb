//! GRPCRoutes through the whole compile: the upstream conformance manifests (v1.6.1
//! `conformance/tests/grpcroute-*.yaml`) as tables, and the spec's rules between GRPCRoutes and
//! HTTPRoutes on one listener.

use shunt_spec::{PathKind, UpstreamProtocol, ValueMatch};

use super::*;

const SERVICE: &str = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";

/// A GRPCRoute `namespace/name` on parent `gateway` (in `infra`) with `hostnames` and `rules` (YAML flow).
fn mk_grpc_route(namespace: &str, name: &str, gateway: &str, hostnames: &str, rules: &str) -> String {
    mk_route(namespace, name, gateway, hostnames, rules).replace("kind: HTTPRoute", "kind: GRPCRoute")
}

fn route_kind<'s>(status: &'s Value, name: &str) -> &'s str {
    let routes = status["routes"].as_array().expect("routes");
    let route = routes.iter().find(|entry| entry["name"] == name).expect("the route");
    route["kind"].as_str().unwrap_or_default()
}

#[test]
fn exact_method_matches_are_exact_paths_to_h2c_backends() {
    // grpcroute-exact-method-matching.yaml.
    let rules = format!(
        "[{{matches: [{{method: {{service: {SERVICE}, method: Echo}}}}], backendRefs: [{{name: v1, port: 8080}}]}}, \
          {{matches: [{{method: {{service: {SERVICE}, method: EchoTwo}}}}], backendRefs: [{{name: v2, port: 8080}}]}}]"
    );
    let compiled = compiled(&mk_grpc_route("infra", "exact-matching", "same", "[]", &rules));
    let status = status(&compiled);
    assert_eq!(route_kind(&status, "exact-matching"), "GRPCRoute");
    assert_eq!(
        parent_conditions(&status, "exact-matching", "same"),
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    assert_eq!(status["gateways"][1]["listeners"][0]["attachedRoutes"], 1);
    let found: Vec<(&str, PathKind, &str)> = paths(&compiled.table, &HostMatch::Any)
        .iter()
        .map(|path| (path.path.as_str(), path.kind, path.backend.as_str()))
        .collect();
    let echo = format!("/{SERVICE}/Echo");
    let two = format!("/{SERVICE}/EchoTwo");
    // More method characters rank first (the paths are exact: only one can match anyway).
    assert_eq!(
        found,
        [
            (two.as_str(), PathKind::Exact, "infra/v2:8080@h2c"),
            (echo.as_str(), PathKind::Exact, "infra/v1:8080@h2c")
        ]
    );
    let backend = &compiled.table.backends["infra/v1:8080@h2c"];
    assert_eq!(
        backend.protocol,
        UpstreamProtocol::H2c,
        "gRPC to pods is HTTP/2 with prior knowledge"
    );
}

#[test]
fn a_method_of_any_service_and_a_regex_are_whole_path_conditions_ranked_by_characters() {
    let rules = "[{matches: [{method: {method: Echo}}], backendRefs: [{name: v1, port: 8080}]}, \
                 {matches: [{method: {type: RegularExpression, service: 'pkg\\.S.*'}}], backendRefs: [{name: v2, port: 8080}]}, \
                 {matches: [{method: {service: pkg.Svc}}], backendRefs: [{name: v3, port: 8080}]}, \
                 {matches: [{headers: [{name: version, value: two}]}], backendRefs: [{name: v3, port: 8080}]}]";
    let compiled = compiled(&mk_grpc_route("infra", "methods", "same", "[]", rules));
    let ranked: Vec<(&str, Option<&ValueMatch>, &str)> = paths(&compiled.table, &HostMatch::Any)
        .iter()
        .map(|path| {
            let condition = path.options.conditions.as_ref().and_then(|c| c.path.as_ref());
            (path.path.as_str(), condition, path.backend.as_str())
        })
        .collect();
    let any_service = ValueMatch::Regex("/[^/]+/Echo".to_string());
    let regex = ValueMatch::Regex("/(?:pkg\\.S.*)/(?:[^/]+)".to_string());
    // Service characters first (`pkg\.S.*` is 8, `pkg.Svc` 7), then method characters, then headers.
    assert_eq!(
        ranked,
        [
            ("/", Some(&regex), "infra/v2:8080@h2c"),
            ("/pkg.Svc", None, "infra/v3:8080@h2c"),
            ("/", Some(&any_service), "infra/v1:8080@h2c"),
            ("/", None, "infra/v3:8080@h2c"),
        ]
    );
}

#[test]
fn header_matches_rank_by_count_then_rule_order() {
    // grpcroute-header-matching.yaml, abridged: `version: two` and `color: orange` beats
    // `version: two` alone, which comes first of the one-header rules after `version: one`.
    let rules = "[{matches: [{headers: [{name: version, value: one}]}], backendRefs: [{name: v1, port: 8080}]}, \
                 {matches: [{headers: [{name: version, value: two}]}], backendRefs: [{name: v2, port: 8080}]}, \
                 {matches: [{headers: [{name: version, value: two}, {name: color, value: orange}]}], backendRefs: [{name: v1, port: 8080}]}]";
    let compiled = compiled(&mk_grpc_route("infra", "grpc-header-matching", "same", "[]", rules));
    let ranked: Vec<(usize, &str)> = paths(&compiled.table, &HostMatch::Any)
        .iter()
        .map(|path| {
            let headers = path.options.conditions.as_ref().map_or(0, |c| c.headers.len());
            (headers, path.backend.as_str())
        })
        .collect();
    assert_eq!(
        ranked,
        [
            (2, "infra/v1:8080@h2c"),
            (1, "infra/v1:8080@h2c"),
            (1, "infra/v2:8080@h2c")
        ]
    );
}

#[test]
fn an_http_route_and_a_grpc_route_on_one_hostname_the_older_is_accepted() {
    let dated = |route: String, name: &str, year: u32| {
        route.replace(
            &format!("name: {name}}}"),
            &format!("name: {name}, creationTimestamp: '{year}-01-01T00:00:00Z'}}"),
        )
    };
    let backend = "[{backendRefs: [{name: v1, port: 8080}]}]";
    let http = dated(
        mk_route("infra", "web", "same", "[a.example.com]", backend),
        "web",
        2021,
    );
    let grpc = dated(
        mk_grpc_route("infra", "rpc", "same", "['*.example.com']", backend),
        "rpc",
        2020,
    );
    let apart = mk_grpc_route("infra", "other", "same", "[b.example.org]", backend);
    let judged = compiled(&format!("{http}{grpc}{apart}"));
    let status = status(&judged);
    assert_eq!(
        parent_conditions(&status, "web", "same")[0],
        condition("Accepted", "False", "HostnameConflict"),
        "the newer HTTPRoute meets the older GRPCRoute's wildcard"
    );
    assert_eq!(
        parent_conditions(&status, "rpc", "same")[0],
        condition("Accepted", "True", "Accepted")
    );
    assert_eq!(
        parent_conditions(&status, "other", "same")[0],
        condition("Accepted", "True", "Accepted")
    );
    assert_eq!(status["gateways"][1]["listeners"][0]["attachedRoutes"], 2);
    assert!(paths(&judged.table, &exact("a.example.com")).is_empty());

    // Two routes of one kind merge as usual.
    let both_http = format!(
        "{http}{}",
        mk_route("infra", "web2", "same", "[a.example.com]", backend)
    );
    let status = super::status(&compiled(&both_http));
    assert_eq!(parent_conditions(&status, "web2", "same")[0].2, "Accepted");
}

#[test]
fn listener_kinds_take_or_refuse_grpc_routes() {
    let gateway = |kinds: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{namespace: infra, name: kinds}}\n\
             spec:\n  gatewayClassName: shunt\n  listeners: [{{name: http, port: 80, protocol: HTTP, allowedRoutes: {{kinds: {kinds}}}}}]\n"
        )
    };
    let route = mk_grpc_route(
        "infra",
        "rpc",
        "kinds",
        "[]",
        "[{backendRefs: [{name: v1, port: 8080}]}]",
    );
    let http_only = compiled(&format!("{}{route}", gateway("[{kind: HTTPRoute}]")));
    assert_eq!(
        parent_conditions(&status(&http_only), "rpc", "kinds")[0],
        condition("Accepted", "False", "NotAllowedByListeners")
    );
    let grpc_only = compiled(&format!("{}{route}", gateway("[{kind: GRPCRoute}]")));
    let status = status(&grpc_only);
    assert_eq!(parent_conditions(&status, "rpc", "kinds")[0].2, "Accepted");
    let listener = &status["gateways"][0]["listeners"][0];
    assert_eq!(
        conditions(&listener["conditions"])[1],
        condition("ResolvedRefs", "True", "ResolvedRefs"),
        "GRPCRoute is a kind shunt serves"
    );
}

#[test]
fn a_cross_namespace_backend_needs_a_grant_from_grpc_routes() {
    let route = mk_grpc_route(
        "tenant",
        "rpc",
        "all",
        "[rpc.example.com]",
        "[{backendRefs: [{name: v1, namespace: infra, port: 8080}]}]",
    );
    let grant = |kind: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {{namespace: infra, name: g}}\n\
             spec: {{from: [{{group: gateway.networking.k8s.io, kind: {kind}, namespace: tenant}}], to: [{{group: '', kind: Service}}]}}\n"
        )
    };
    let for_http = compiled(&format!("{route}{}", grant("HTTPRoute")));
    assert_eq!(
        parent_conditions(&status(&for_http), "rpc", "all")[1],
        condition("ResolvedRefs", "False", "RefNotPermitted")
    );
    let for_grpc = compiled(&format!("{route}{}", grant("GRPCRoute")));
    assert_eq!(
        parent_conditions(&status(&for_grpc), "rpc", "all")[1],
        condition("ResolvedRefs", "True", "ResolvedRefs")
    );
    assert!(for_grpc.table.backends.contains_key("infra/v1:8080@h2c"));
}

#[test]
fn a_grpc_route_past_the_bounds_or_with_an_http_only_filter_is_unsupported() {
    let many: Vec<String> = (0..17)
        .map(|_| "{backendRefs: [{name: v1, port: 8080}]}".to_string())
        .collect();
    let too_many = compiled(&mk_grpc_route(
        "infra",
        "many",
        "same",
        "[]",
        &format!("[{}]", many.join(", ")),
    ));
    assert_eq!(
        parent_conditions(&status(&too_many), "many", "same")[0],
        condition("Accepted", "False", "UnsupportedValue")
    );
    let redirect = "[{filters: [{type: RequestRedirect, requestRedirect: {statusCode: 301}}], backendRefs: [{name: v1, port: 8080}]}]";
    let refused = compiled(&mk_grpc_route("infra", "redirect", "same", "[]", redirect));
    assert_eq!(
        parent_conditions(&status(&refused), "redirect", "same")[0],
        condition("Accepted", "False", "UnsupportedValue")
    );
    assert!(paths(&refused.table, &HostMatch::Any).is_empty());
}
