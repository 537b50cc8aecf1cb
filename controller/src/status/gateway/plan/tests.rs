//! `plan` on states compiled from manifests: what each object's status becomes, that a status
//! already written gets no patch, that transition times last while a condition's status does,
//! and that other controllers' route parents stay.

use std::{path::Path, sync::Arc};

use serde_json::{Value, json};

use super::*;
use crate::compile::{ClusterState, CompileOptions, compile};

const BASE: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shunt, generation: 1, resourceVersion: "1"}
spec: {controllerName: shunt.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: web, generation: 2, resourceVersion: "2"}
spec:
  gatewayClassName: shunt
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: odd, port: 81, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: api, generation: 3, resourceVersion: "3"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  rules: [{backendRefs: [{name: missing, port: 8080}]}]
"#;

fn mk_state(yaml: &str) -> ClusterState {
    let objects = crate::manifests::parse_documents(yaml, Path::new("test.yaml")).expect("valid manifests");
    ClusterState::from_objects(objects)
}

/// The patches for `state` at time `now`.
fn patches(state: &ClusterState, now: &str) -> Vec<Patch> {
    let status = compile(state, &CompileOptions::default())
        .gateway
        .expect("a gateway layer");
    let objects = Objects {
        classes: state.gateway_classes.clone(),
        gateways: state.gateways.clone(),
        routes: state.http_routes.clone(),
        grpc_routes: state.grpc_routes.clone(),
    };
    plan(&status, &objects, &["10.0.0.9".to_string()], now)
}

/// `state` with each patched object's status as written (what the watch then delivers).
fn written(state: &ClusterState, patches: &[Patch]) -> ClusterState {
    let mut state = state.clone();
    for patch in patches {
        let apply = |status: &mut Option<Value>| *status = Some(patch.status.clone());
        match patch.kind {
            Kind::GatewayClass => {
                state.gateway_classes = with(&state.gateway_classes, patch, |o| apply(&mut o.status), |o| &o.metadata)
            }
            Kind::Gateway => state.gateways = with(&state.gateways, patch, |o| apply(&mut o.status), |o| &o.metadata),
            Kind::HTTPRoute => {
                state.http_routes = with(&state.http_routes, patch, |o| apply(&mut o.status), |o| &o.metadata)
            }
            Kind::GRPCRoute => {
                state.grpc_routes = with(&state.grpc_routes, patch, |o| apply(&mut o.status), |o| &o.metadata)
            }
        }
    }
    state
}

fn with<T: Clone>(
    objects: &[Arc<T>],
    patch: &Patch,
    mut change: impl FnMut(&mut T),
    meta: impl Fn(&T) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Vec<Arc<T>> {
    (objects.iter())
        .map(
            |object| match meta(object).name.as_deref() == Some(patch.name.as_str()) {
                true => {
                    let mut object = (**object).clone();
                    change(&mut object);
                    Arc::new(object)
                }
                false => object.clone(),
            },
        )
        .collect()
}

fn find(patches: &[Patch], kind: Kind) -> &Value {
    &patches.iter().find(|patch| patch.kind == kind).expect("a patch").status
}

#[test]
fn every_owned_object_gets_its_status_with_generation_and_addresses() {
    let patches = patches(&mk_state(BASE), "2026-01-01T00:00:00Z");
    assert_eq!(patches.len(), 3);
    let class = find(&patches, Kind::GatewayClass);
    assert_eq!(class["conditions"][0]["type"], "Accepted");
    assert_eq!(class["conditions"][0]["observedGeneration"], 1);
    assert_eq!(class["supportedFeatures"][0], json!({"name": "GRPCRoute"}));
    assert_eq!(
        class["supportedFeatures"][1],
        json!({"name": "GRPCRouteNamedRouteRule"})
    );
    assert_eq!(class["supportedFeatures"][2], json!({"name": "Gateway"}));
    let gateway = find(&patches, Kind::Gateway);
    assert_eq!(
        gateway["addresses"],
        json!([{"type": "IPAddress", "value": "10.0.0.9"}])
    );
    assert_eq!(gateway["listeners"][0]["attachedRoutes"], 1);
    assert_eq!(
        gateway["listeners"][0]["supportedKinds"],
        json!([{"group": GROUP, "kind": "HTTPRoute"}, {"group": GROUP, "kind": "GRPCRoute"}])
    );
    assert_eq!(gateway["listeners"][1]["conditions"][0]["reason"], "PortUnavailable");
    assert_eq!(gateway["conditions"][0]["observedGeneration"], 2);
    let route = find(&patches, Kind::HTTPRoute);
    let parent = &route["parents"][0];
    assert_eq!(parent["controllerName"], CONTROLLER_NAME);
    assert_eq!(parent["parentRef"], json!({"name": "web", "sectionName": "http"}));
    let resolved = &parent["conditions"][1];
    assert_eq!(
        (&resolved["type"], &resolved["reason"]),
        (&json!("ResolvedRefs"), &json!("BackendNotFound"))
    );
    assert_eq!(resolved["observedGeneration"], 3);
    let patch = patches.iter().find(|p| p.kind == Kind::HTTPRoute).expect("route patch");
    assert_eq!(
        (patch.namespace.as_deref(), patch.resource_version.as_str()),
        (Some("shop"), "3")
    );
}

#[test]
fn a_status_already_written_is_not_written_again_and_keeps_its_transition_times() {
    let state = mk_state(BASE);
    let first = patches(&state, "2026-01-01T00:00:00Z");
    let state = written(&state, &first);
    assert_eq!(patches(&state, "2026-01-02T00:00:00Z"), vec![]);
    // The Service appears: ResolvedRefs turns True (a new time), Accepted keeps its own.
    let service = "---\napiVersion: v1\nkind: Service\nmetadata: {namespace: shop, name: missing}\nspec: {ports: [{port: 8080}]}\n";
    let mut more = mk_state(&format!("{BASE}{service}"));
    more.gateway_classes = state.gateway_classes.clone();
    more.gateways = state.gateways.clone();
    more.http_routes = state.http_routes.clone();
    let next = patches(&more, "2026-01-03T00:00:00Z");
    assert_eq!(next.len(), 1, "only the route changed: {next:?}");
    let conditions = &next[0].status["parents"][0]["conditions"];
    assert_eq!(conditions[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
    assert_eq!(conditions[1]["status"], "True");
    assert_eq!(conditions[1]["lastTransitionTime"], "2026-01-03T00:00:00Z");
}

#[test]
fn other_controllers_parents_stay_and_ours_go_when_the_route_leaves() {
    let theirs = json!({"parentRef": {"name": "other"}, "controllerName": "example.com/gw", "conditions": []});
    let mut state = mk_state(BASE);
    let mut route = (*state.http_routes[0]).clone();
    route.status = Some(json!({"parents": [theirs.clone()]}));
    state.http_routes = vec![Arc::new(route)];
    let first = patches(&state, "2026-01-01T00:00:00Z");
    let parents = &find(&first, Kind::HTTPRoute)["parents"];
    assert_eq!(
        (parents[0].clone(), parents.as_array().map(Vec::len)),
        (theirs.clone(), Some(2))
    );
    // The route now names only the other controller's Gateway: ours is cleared, theirs stays.
    let mut state = written(&state, &first);
    let mut route = (*state.http_routes[0]).clone();
    route.spec.parent_refs[0].name = "other".to_string();
    state.http_routes = vec![Arc::new(route)];
    let next = patches(&state, "2026-01-02T00:00:00Z");
    assert_eq!(find(&next, Kind::HTTPRoute), &json!({"parents": [theirs]}));
}

#[test]
fn supported_features_are_sorted_and_unique() {
    let mut sorted = SUPPORTED_FEATURES.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, SUPPORTED_FEATURES);
}

#[test]
fn a_grpc_route_gets_its_own_status_beside_an_http_route_of_the_same_name() {
    let grpc = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\n\
                metadata: {namespace: shop, name: api, generation: 7, resourceVersion: \"7\"}\n\
                spec: {parentRefs: [{name: web, sectionName: http}], hostnames: [rpc.example.com], \
                rules: [{backendRefs: [{name: missing, port: 8080}]}]}\n";
    let state = mk_state(&format!("{BASE}{grpc}"));
    let first = patches(&state, "2026-01-01T00:00:00Z");
    let grpc = first
        .iter()
        .find(|p| p.kind == Kind::GRPCRoute)
        .expect("a GRPCRoute patch");
    assert_eq!(grpc.resource_version, "7");
    let conditions = &grpc.status["parents"][0]["conditions"];
    assert_eq!(conditions[0]["observedGeneration"], 7);
    assert_eq!(
        (&conditions[1]["type"], &conditions[1]["reason"]),
        (&json!("ResolvedRefs"), &json!("BackendNotFound"))
    );
    let http = find(&first, Kind::HTTPRoute);
    assert_eq!(http["parents"][0]["conditions"][0]["observedGeneration"], 3);
    // The HTTPRoute (no hostnames: every host) came first and holds the listener's hosts.
    assert_eq!(conditions[0]["reason"], "HostnameConflict");
    let gateway = find(&first, Kind::Gateway);
    assert_eq!(gateway["listeners"][0]["attachedRoutes"], 1);
    // Written, nothing is left to write.
    let state = written(&state, &first);
    assert_eq!(patches(&state, "2026-01-02T00:00:00Z"), vec![]);
}
