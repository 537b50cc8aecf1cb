use std::path::Path;

use serde_json::Value;
use shunt_spec::HostMatch;

use crate::compile::{ClusterState, CompileOptions, Compiled, compile};

/// Another implementation's class `theirs` with a Gateway `edge` (HTTP on 80, HTTPS on 443
/// without a certificate, TCP on 9000), and a Service `web`.
const BASE: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: theirs}
spec: {controllerName: example.net/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: edge}
spec:
  gatewayClassName: theirs
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: tcp, port: 9000, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
spec: {ports: [{port: 8080}]}
"#;

fn route(name: &str, section: &str, hostnames: &str, filters: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{namespace: shop, name: {name}}}\n\
         spec: {{parentRefs: [{{name: edge, sectionName: {section}}}], hostnames: {hostnames}, \
         rules: [{{filters: {filters}, backendRefs: [{{name: web, port: 8080}}]}}]}}\n"
    )
}

fn compiled(extra: &str, shadowed: &[&str]) -> Compiled {
    let yaml = format!("{BASE}{extra}");
    let objects = crate::manifests::parse_documents(&yaml, Path::new("test.yaml")).expect("valid manifests");
    let options = CompileOptions {
        shadow_gateway_classes: shadowed.iter().map(|name| name.to_string()).collect(),
        ..CompileOptions::default()
    };
    compile(&ClusterState::from_objects(objects), &options)
}

fn served(compiled: &Compiled, host: &str) -> bool {
    let host = HostMatch::Exact(host.to_string());
    compiled.table.hosts.iter().any(|vhost| vhost.host == host)
}

/// The `/shadow-gateway` document's host verdicts as (host, verdict, reasons).
fn verdicts(compiled: &Compiled) -> Vec<(String, String, Vec<String>)> {
    let Some(text) = compiled.table.documents.get("shadow-gateway") else {
        return Vec::new();
    };
    let document: Value = serde_json::from_str(&text.text()).expect("JSON");
    let hosts = document["hosts"].as_array().expect("hosts").iter();
    hosts
        .map(|host| {
            let reasons = host["reasons"].as_array().expect("reasons").iter();
            (
                host["host"].as_str().expect("a host").to_string(),
                host["verdict"].as_str().expect("a verdict").to_string(),
                reasons.map(|r| r.as_str().expect("text").to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn a_shadowed_class_routes_are_served_identical_and_given_no_status() {
    let routes = route("shop", "http", "[shop.example.com]", "[]");
    let compiled = compiled(&routes, &["theirs"]);
    assert!(served(&compiled, "shop.example.com"));
    assert_eq!(
        verdicts(&compiled),
        [("shop.example.com".to_string(), "identical".to_string(), vec![])]
    );
    let status = compiled.gateway.expect("a Gateway API layer");
    assert!(status.gateways.is_empty() && status.routes.is_empty() && status.gateway_classes.is_empty());
}

#[test]
fn without_the_flag_another_implementations_routes_are_left_alone() {
    let compiled = compiled(&route("shop", "http", "[shop.example.com]", "[]"), &[]);
    assert!(!served(&compiled, "shop.example.com"));
    assert!(verdicts(&compiled).is_empty());
}

#[test]
fn a_class_named_but_absent_is_not_shadowed() {
    let compiled = compiled(&route("shop", "http", "[shop.example.com]", "[]"), &["other"]);
    assert!(!served(&compiled, "shop.example.com"));
}

#[test]
fn an_extension_ref_filter_refuses_the_route_and_keeps_it_out_of_the_table() {
    let filters = "[{type: ExtensionRef, extensionRef: {group: example.net, kind: Waf, name: strict}}]";
    let compiled = compiled(&route("guarded", "http", "[pay.example.com]", filters), &["theirs"]);
    assert!(!served(&compiled, "pay.example.com"));
    assert_eq!(
        verdicts(&compiled),
        [(
            "pay.example.com".to_string(),
            "refused".to_string(),
            vec!["ExtensionRef: filter Waf strict is the other implementation's extension".to_string()]
        )]
    );
}

#[test]
fn a_listener_shunt_does_not_serve_refuses_the_routes_naming_it() {
    let compiled = compiled(&route("raw", "tcp", "[raw.example.com]", "[]"), &["theirs"]);
    assert!(!served(&compiled, "raw.example.com"));
    let (_, verdict, reasons) = &verdicts(&compiled)[0];
    assert_eq!(verdict, "refused");
    assert!(reasons.contains(&"Listener: tcp (TCP on port 9000) is not one shunt serves".to_string()));
}

#[test]
fn a_route_without_hostnames_is_a_reported_catch_all() {
    let compiled = compiled(&route("all", "http", "[]", "[]"), &["theirs"]);
    assert_eq!(
        verdicts(&compiled),
        [("*".to_string(), "identical".to_string(), vec![])]
    );
    assert!(crate::dns::served_hosts(&compiled.table).is_empty());
}

#[test]
fn extension_ref_reasons_are_bounded_whatever_the_tenant_writes() {
    let long = "x".repeat(5000);
    let many: Vec<String> = (0..40)
        .map(|at| format!("{{type: ExtensionRef, extensionRef: {{group: g, kind: K{at}, name: {long}}}}}"))
        .collect();
    let compiled = compiled(
        &route("many", "http", "[many.example.com]", &format!("[{}]", many.join(", "))),
        &["theirs"],
    );
    let (_, verdict, reasons) = &verdicts(&compiled)[0];
    assert_eq!(verdict, "refused");
    assert_eq!(reasons.len(), super::MAX_EXTENSION_REASONS);
    assert!(reasons.iter().all(|reason| reason.len() < 400), "{reasons:?}");
}

/// The incremental compile keeps the last report while the verdicts stand: the publisher sees
/// the same document and reads neither. A changed verdict gives a new one.
#[test]
fn the_incremental_compile_keeps_the_report_while_the_verdicts_stand() {
    let state = |hostnames: &str| {
        let yaml = format!("{BASE}{}", route("r", "http", hostnames, "[]"));
        let objects = crate::manifests::parse_documents(&yaml, Path::new("test.yaml")).expect("valid manifests");
        ClusterState::from_objects(objects)
    };
    let options = CompileOptions {
        shadow_gateway_classes: vec!["theirs".to_string()],
        ..CompileOptions::default()
    };
    let report = |compiled: &Compiled| {
        compiled
            .table
            .documents
            .get("shadow-gateway")
            .expect("a report")
            .clone()
    };
    let mut incremental = crate::compile::Incremental::default();
    let first = report(&incremental.compile(&state("[a.example.com]"), &options));
    let again = report(&incremental.compile(&state("[a.example.com]"), &options));
    assert!(again.is_same(&first) && !first.is_written());
    let changed = incremental.compile(&state("[b.example.com]"), &options);
    assert!(!report(&changed).is_same(&first));
    assert_eq!(changed, compile(&state("[b.example.com]"), &options));
}
