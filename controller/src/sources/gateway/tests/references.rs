//! Backend and certificate references: ReferenceGrants, the `ResolvedRefs` reasons, 500 for a
//! share that does not resolve, and what shunt refuses (`UnsupportedValue`).

use shunt_spec::BackendSplit;

use super::*;

const GRANT: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {namespace: infra, name: let-tenant}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: tenant}]
  to: [{group: "", kind: Service, name: v1}]
"#;

fn split(path: &PathSpec) -> &BackendSplit {
    path.options.split.as_ref().expect("a split")
}

#[test]
fn a_backend_in_another_namespace_needs_a_reference_grant() {
    let route = mk_route(
        "tenant",
        "web",
        "all",
        "[web.example.com]",
        "[{backendRefs: [{name: v1, namespace: infra, port: 8080}]}]",
    );
    let refused = compiled(&route);
    assert_eq!(
        parent_conditions(&status(&refused), "web", "all")[1],
        condition("ResolvedRefs", "False", "RefNotPermitted")
    );
    let paths_refused = paths(&refused.table, &exact("web.example.com"));
    assert_eq!(
        split(paths_refused[0]).choices[0].backend,
        None,
        "its share answers 500"
    );
    assert!(!refused.table.backends.contains_key("infra/v1:8080"));

    let granted = compiled(&format!("{route}{GRANT}"));
    assert_eq!(
        parent_conditions(&status(&granted), "web", "all")[1],
        condition("ResolvedRefs", "True", "ResolvedRefs")
    );
    let paths_granted = paths(&granted.table, &exact("web.example.com"));
    assert_eq!(paths_granted[0].backend, "infra/v1:8080");
    assert!(granted.table.backends.contains_key("infra/v1:8080"));
}

#[test]
fn a_grant_naming_one_service_does_not_open_the_others() {
    let route = mk_route(
        "tenant",
        "web",
        "all",
        "[web.example.com]",
        "[{backendRefs: [{name: v2, namespace: infra, port: 8080}]}]",
    );
    let status = status(&compiled(&format!("{route}{GRANT}")));
    assert_eq!(
        parent_conditions(&status, "web", "all")[1],
        condition("ResolvedRefs", "False", "RefNotPermitted")
    );
}

#[test]
fn unresolved_references_give_the_specs_reasons_and_keep_their_share() {
    let cases = [
        ("[{name: nowhere, port: 8080}]", "BackendNotFound"),
        ("[{name: v1, port: 9999}]", "BackendNotFound"),
        (
            "[{group: multicluster.x-k8s.io, kind: ServiceImport, name: v1, port: 8080}]",
            "InvalidKind",
        ),
    ];
    for (refs, reason) in cases {
        let rules = format!(
            "[{{backendRefs: [{{name: v2, port: 8080, weight: 1}}, {}]}}]",
            &refs[1..refs.len() - 1]
        );
        let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", &rules));
        assert_eq!(
            parent_conditions(&status(&compiled), "web", "same")[1],
            condition("ResolvedRefs", "False", reason),
            "{refs}"
        );
        let path = paths(&compiled.table, &exact("web.example.com"))[0];
        let backends: Vec<Option<&str>> = split(path).choices.iter().map(|c| c.backend.as_deref()).collect();
        assert_eq!(backends, [Some("infra/v2:8080"), None], "{refs}");
    }
}

#[test]
fn a_rule_without_backends_answers_500() {
    let compiled = compiled(&mk_route(
        "infra",
        "web",
        "same",
        "[web.example.com]",
        "[{matches: [{path: {value: /x}}]}]",
    ));
    let path = paths(&compiled.table, &exact("web.example.com"))[0];
    assert_eq!(split(path).choices.len(), 1);
    assert_eq!(split(path).choices[0].backend, None);
}

#[test]
fn what_shunt_cannot_serve_is_refused_as_unsupported() {
    let rules = [
        "[{matches: [{path: {type: RegularExpression, value: /a.*}}], backendRefs: [{name: v1, port: 8080}]}]",
        "[{filters: [{type: RequestMirror, requestMirror: {backendRef: {name: v2, port: 8080}, percent: 5, fraction: {numerator: 1}}}], backendRefs: [{name: v1, port: 8080}]}]",
        "[{filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: Host, value: x}]}}], backendRefs: [{name: v1, port: 8080}]}]",
        "[{matches: [{headers: [{type: RegularExpression, name: x, value: '(a'}]}], backendRefs: [{name: v1, port: 8080}]}]",
    ];
    for rules in rules {
        let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", rules));
        assert_eq!(
            parent_conditions(&status(&compiled), "web", "same")[0],
            condition("Accepted", "False", "UnsupportedValue"),
            "{rules}"
        );
        assert!(paths(&compiled.table, &exact("web.example.com")).is_empty(), "{rules}");
    }
}

#[test]
fn an_extension_filter_answers_500_and_is_an_unresolved_kind() {
    let rules = "[{filters: [{type: ExtensionRef, extensionRef: {group: x.dev, kind: Magic, name: m}}], backendRefs: [{name: v1, port: 8080}]}]";
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", rules));
    assert_eq!(
        parent_conditions(&status(&compiled), "web", "same")[1],
        condition("ResolvedRefs", "False", "InvalidKind")
    );
    let path = paths(&compiled.table, &exact("web.example.com"))[0];
    assert_eq!(split(path).choices[0].backend, None);
}

#[test]
fn a_route_past_the_bounds_is_refused() {
    let rule = "{backendRefs: [{name: v1, port: 8080}]}";
    let rules = format!("[{}]", vec![rule; 17].join(", "));
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", &rules));
    assert_eq!(
        parent_conditions(&status(&compiled), "web", "same")[0],
        condition("Accepted", "False", "UnsupportedValue")
    );
}

#[test]
fn an_https_listener_needs_a_certificate_it_may_read() {
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: tls}
spec:
  gatewayClassName: shunt
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    tls: {certificateRefs: [{name: cert, namespace: secrets}]}
"#;
    let status = status(&compiled(gateway));
    let tls = status["gateways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "tls")
        .unwrap()
        .clone();
    let listener = conditions(&tls["listeners"][0]["conditions"]);
    assert!(
        listener.contains(&condition("ResolvedRefs", "False", "RefNotPermitted")),
        "{listener:?}"
    );
    assert!(listener.contains(&condition("Programmed", "False", "Invalid")));
    let missing = gateway.replace(", namespace: secrets", "");
    let status = super::status(&compiled(&missing));
    let tls = status["gateways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "tls")
        .unwrap()
        .clone();
    let listener = conditions(&tls["listeners"][0]["conditions"]);
    assert!(
        listener.contains(&condition("ResolvedRefs", "False", "InvalidCertificateRef")),
        "{listener:?}"
    );
}

#[test]
fn a_host_holds_at_most_its_bound_of_paths_and_the_newest_routes_lose_theirs() {
    // 33 routes of 128 matches each on one host: 4224 paths, 128 past the bound.
    let matches: Vec<String> = (0..8).map(|at| format!("{{path: {{value: /m{at}}}}}")).collect();
    let manifests: String = (0..33)
        .map(|route| {
            let rules: Vec<String> = (0..16)
                .map(|rule| {
                    let matches = matches.join(", ").replace("/m", &format!("/r{route}/{rule}/m"));
                    format!("{{matches: [{matches}], backendRefs: [{{name: v1, port: 8080}}]}}")
                })
                .collect();
            let created = format!("creationTimestamp: '2020-01-01T00:00:{route:02}Z'");
            mk_route(
                "infra",
                &format!("r{route}"),
                "same",
                "[a.example.com]",
                &format!("[{}]", rules.join(", ")),
            )
            .replace(&format!("name: r{route}}}"), &format!("name: r{route}, {created}}}"))
        })
        .collect();
    let compiled = compiled(&manifests);
    let paths = paths(&compiled.table, &exact("a.example.com"));
    assert_eq!(paths.len(), super::super::hosts::MAX_HOST_PATHS);
    assert!(
        paths.iter().all(|path| path.source != "infra/r32"),
        "the newest route's paths are the ones dropped"
    );
}
