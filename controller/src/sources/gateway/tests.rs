//! The Gateway API layer through the whole compile: manifests as an operator writes them, the
//! table and the `/gateway` status that come out.

mod attachment;
mod cors;
mod grpc;
mod mirror;
mod named;
mod ports;
mod precedence;
mod references;

use std::path::Path;

use serde_json::Value;
use shunt_spec::{HostMatch, PathSpec, TableSpec};

use crate::compile::{ClusterState, CompileOptions, Compiled, compile};

/// shunt's GatewayClass, a Gateway taking routes of its own namespace (`same`) and one taking
/// every namespace's (`all`), both plain HTTP on port 80, in namespace `infra`; Services
/// `v1`, `v2` and `v3` there (port 8080, one endpoint each).
const BASE: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shunt}
spec: {controllerName: shunt.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: same}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: all}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
"#;

fn mk_services(namespace: &str) -> String {
    let mut yaml = String::new();
    for (at, name) in ["v1", "v2", "v3"].iter().enumerate() {
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: Service\nmetadata: {{namespace: {namespace}, name: {name}}}\n\
             spec: {{ports: [{{port: 8080}}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
             metadata: {{namespace: {namespace}, name: {name}-x, labels: {{kubernetes.io/service-name: {name}}}}}\n\
             addressType: IPv4\nports: [{{port: 3000}}]\nendpoints: [{{addresses: [10.0.0.{at}]}}]\n"
        ));
    }
    yaml
}

/// The state of [`BASE`], the Services in `infra`, and `extra`.
fn mk_state(extra: &str) -> ClusterState {
    let yaml = format!("{BASE}{}\n---\n{extra}", mk_services("infra"));
    let objects = crate::manifests::parse_documents(&yaml, Path::new("test.yaml")).expect("valid manifests");
    ClusterState::from_objects(objects)
}

fn compiled(extra: &str) -> Compiled {
    compile(&mk_state(extra), &CompileOptions::default())
}

/// The `/gateway` document.
fn status(compiled: &Compiled) -> Value {
    let text = compiled.table.documents.get("gateway").expect("a gateway document");
    serde_json::from_str(&text.text()).expect("JSON")
}

/// `(type, status, reason)` of each condition of `route`'s parent `gateway`.
fn parent_conditions(status: &Value, route: &str, gateway: &str) -> Vec<(String, String, String)> {
    let routes = status["routes"].as_array().expect("routes");
    let route = routes
        .iter()
        .find(|entry| entry["name"] == route)
        .expect("the route's status");
    let parents = route["parents"].as_array().expect("parents");
    let parent = parents
        .iter()
        .find(|entry| entry["parentRef"]["name"] == gateway)
        .expect("the parent's status");
    conditions(&parent["conditions"])
}

fn conditions(list: &Value) -> Vec<(String, String, String)> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    let list = list.as_array().expect("conditions");
    list.iter()
        .map(|condition| {
            (
                text(&condition["type"]),
                text(&condition["status"]),
                text(&condition["reason"]),
            )
        })
        .collect()
}

fn condition(type_: &str, status: &str, reason: &str) -> (String, String, String) {
    (type_.to_string(), status.to_string(), reason.to_string())
}

/// The paths of `host` in the table, in rank order.
fn paths<'t>(table: &'t TableSpec, host: &HostMatch) -> Vec<&'t PathSpec> {
    let vhost = table.hosts.iter().find(|vhost| vhost.host == *host);
    let mut paths: Vec<&PathSpec> = vhost.map(|vhost| vhost.paths.iter().collect()).unwrap_or_default();
    paths.sort_by_key(|path| path.options.rank);
    paths
}

fn exact(host: &str) -> HostMatch {
    HostMatch::Exact(host.to_string())
}

/// An HTTPRoute `namespace/name` on parent `gateway` (in `infra`) with `hostnames` and `rules` (YAML flow).
fn mk_route(namespace: &str, name: &str, gateway: &str, hostnames: &str, rules: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{namespace: {namespace}, name: {name}}}\n\
         spec:\n  parentRefs: [{{name: {gateway}, namespace: infra}}]\n  hostnames: {hostnames}\n  rules: {rules}\n"
    )
}
