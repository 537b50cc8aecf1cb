//! What to write into each Gateway API object's status, computed from the compile's `/gateway`
//! document and the objects as the compile read them; pure, for tests. An object whose status
//! already says it gets no patch.
//!
//! Each condition carries the object's `observedGeneration`; its `lastTransitionTime` is kept
//! while its status does not change. A route's parents written by other controllers stay.

use std::{net::IpAddr, sync::Arc};

use serde_json::{Value, json};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::sources::gateway::{
    CONTROLLER_NAME, GatewayStatus,
    grpc::objects::GRPCRoute,
    objects::{GROUP, Gateway, GatewayClass, HTTPRoute, Listener},
    status::{Condition, ParentStatus},
};

/// The Gateway API objects one compile read.
#[derive(Clone, Debug, Default)]
pub struct Objects {
    pub classes: Vec<Arc<GatewayClass>>,
    pub gateways: Vec<Arc<Gateway>>,
    pub routes: Vec<Arc<HTTPRoute>>,
    pub grpc_routes: Vec<Arc<GRPCRoute>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    GatewayClass,
    Gateway,
    HTTPRoute,
    GRPCRoute,
}

/// One status to write: the whole of what shunt owns in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub kind: Kind,
    /// `None` for a GatewayClass.
    pub namespace: Option<String>,
    pub name: String,
    /// As read: the write is conditional on it.
    pub resource_version: String,
    pub status: Value,
}

/// The features `supportedFeatures` claims whatever the flags, sorted as the API requires: the
/// core ones and the extended ones `tests/e2e/gateway/` reproduces (`listeners::classes` adds
/// those a flag enables).
pub const SUPPORTED_FEATURES: [&str; 20] = [
    "GRPCRoute",
    "GRPCRouteNamedRouteRule",
    "Gateway",
    "HTTPRoute",
    "HTTPRouteBackendTimeout",
    "HTTPRouteCORS",
    "HTTPRouteHostRewrite",
    "HTTPRouteMethodMatching",
    "HTTPRouteNamedRouteRule",
    "HTTPRoutePathRedirect",
    "HTTPRoutePathRewrite",
    "HTTPRoutePortRedirect",
    "HTTPRouteQueryParamMatching",
    "HTTPRouteRequestMirror",
    "HTTPRouteRequestMultipleMirrors",
    "HTTPRouteRequestPercentageMirror",
    "HTTPRouteRequestTimeout",
    "HTTPRouteResponseHeaderModification",
    "HTTPRouteSchemeRedirect",
    "ReferenceGrant",
];

/// Every status that differs from what `status` says; `addresses` go into each Gateway's, `now`
/// (RFC 3339) is the transition time of a condition whose status changed.
pub fn plan(status: &GatewayStatus, objects: &Objects, addresses: &[String], now: &str) -> Vec<Patch> {
    let mut patches = Vec::new();
    for entry in &status.gateway_classes {
        let Some(class) = objects
            .classes
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(&entry.name))
        else {
            continue;
        };
        let generation = class.metadata.generation;
        let current = class.status.as_ref();
        let features = entry.supported_features.iter();
        let desired = json!({
            "conditions": conditions(&entry.conditions, field(current, "conditions"), generation, now),
            "supportedFeatures": features.map(|name| json!({"name": name})).collect::<Vec<_>>(),
        });
        patches.extend(differs(Kind::GatewayClass, &class.metadata, current, desired));
    }
    for entry in &status.gateways {
        let Some(gateway) = find(&objects.gateways, &entry.namespace, &entry.name, |g| &g.metadata) else {
            continue;
        };
        let desired = gateway_status(gateway, entry, addresses, now);
        patches.extend(differs(
            Kind::Gateway,
            &gateway.metadata,
            gateway.status.as_ref(),
            desired,
        ));
    }
    let http = (objects.routes.iter()).map(|route| (Kind::HTTPRoute, &route.metadata, route.status.as_ref()));
    let grpc = (objects.grpc_routes.iter()).map(|route| (Kind::GRPCRoute, &route.metadata, route.status.as_ref()));
    for (kind, metadata, current) in http.chain(grpc) {
        let (namespace, name) = (
            metadata.namespace.as_deref().unwrap_or_default(),
            metadata.name.as_deref().unwrap_or_default(),
        );
        let kind_name = match kind {
            Kind::GRPCRoute => "GRPCRoute",
            _ => "HTTPRoute",
        };
        let ours = (status.routes.iter()).find(|r| r.kind == kind_name && r.namespace == namespace && r.name == name);
        // A route never ours has nothing to clear.
        if ours.is_none() && !has_our_parents(current) {
            continue;
        }
        let ours = ours.map(|r| r.parents.as_slice()).unwrap_or_default();
        let desired = route_status((metadata, current), ours, now);
        patches.extend(differs(kind, metadata, current, desired));
    }
    patches
}

fn find<'o, T>(
    objects: &'o [Arc<T>],
    namespace: &str,
    name: &str,
    meta: impl Fn(&T) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<&'o T> {
    objects.iter().map(Arc::as_ref).find(|object| {
        let meta = meta(object);
        meta.namespace.as_deref().unwrap_or_default() == namespace && meta.name.as_deref() == Some(name)
    })
}

/// A patch when some field of `desired` is not as `current` has it.
fn differs(
    kind: Kind,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    current: Option<&Value>,
    desired: Value,
) -> Option<Patch> {
    let fields = desired.as_object()?;
    let same = fields.iter().all(|(key, value)| field(current, key) == Some(value));
    (!same).then(|| Patch {
        kind,
        namespace: meta.namespace.clone(),
        name: meta.name.clone().unwrap_or_default(),
        resource_version: meta.resource_version.clone().unwrap_or_default(),
        status: desired,
    })
}

fn field<'v>(status: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    status?.get(key)
}

/// `desired` as `metav1.Condition`s, each keeping the transition time `current` gives it while
/// its status is unchanged.
fn conditions(desired: &[Condition], current: Option<&Value>, generation: Option<i64>, now: &str) -> Value {
    let current = current.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let written = desired.iter().map(|condition| {
        let before = current
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(condition.type_));
        let kept = before
            .filter(|c| c.get("status").and_then(Value::as_str) == Some(condition.status))
            .and_then(|c| c.get("lastTransitionTime").cloned());
        let mut written = json!({
            "type": condition.type_,
            "status": condition.status,
            "reason": condition.reason,
            "message": "",
            "lastTransitionTime": kept.unwrap_or_else(|| Value::from(now)),
        });
        if let Some(generation) = generation {
            written["observedGeneration"] = generation.into();
        }
        written
    });
    Value::Array(written.collect())
}

fn gateway_status(
    gateway: &Gateway,
    entry: &crate::sources::gateway::status::GatewayEntry,
    addresses: &[String],
    now: &str,
) -> Value {
    let generation = gateway.metadata.generation;
    let current = gateway.status.as_ref();
    let before = |name: &str| {
        let listeners = field(current, "listeners")?.as_array()?;
        let listener = listeners
            .iter()
            .find(|l| l.get("name").and_then(Value::as_str) == Some(name))?;
        listener.get("conditions")
    };
    let listeners: Vec<Value> = (entry.listeners.iter())
        .map(|listener| {
            let spec = gateway.spec.listeners.iter().find(|l| l.name == listener.name);
            json!({
                "name": listener.name,
                "attachedRoutes": listener.attached_routes,
                "supportedKinds": spec.map(supported_kinds).unwrap_or_default(),
                "conditions": conditions(&listener.conditions, before(&listener.name), generation, now),
            })
        })
        .collect();
    let addresses: Vec<Value> = addresses.iter().map(|address| address_entry(address)).collect();
    json!({
        "conditions": conditions(&entry.conditions, field(current, "conditions"), generation, now),
        "listeners": listeners,
        "addresses": addresses,
    })
}

/// The route kinds a listener takes: HTTPRoute and GRPCRoute, when its protocol serves them
/// and its `allowedRoutes.kinds` (if any) name them.
fn supported_kinds(listener: &Listener) -> Vec<Value> {
    if !matches!(listener.protocol.as_str(), "HTTP" | "HTTPS") {
        return Vec::new();
    }
    let kinds = (listener.allowed_routes.as_ref()).and_then(|allowed| allowed.kinds.as_ref());
    let named = |name: &str| {
        kinds.is_none_or(|kinds| {
            (kinds.iter()).any(|kind| kind.kind == name && kind.group.as_deref().is_none_or(|group| group == GROUP))
        })
    };
    (["HTTPRoute", "GRPCRoute"].into_iter())
        .filter(|name| named(name))
        .map(|name| json!({"group": GROUP, "kind": name}))
        .collect()
}

fn address_entry(address: &str) -> Value {
    let type_ = match address.parse::<IpAddr>() {
        Ok(_) => "IPAddress",
        Err(_) => "Hostname",
    };
    json!({"type": type_, "value": address})
}

/// The route's parents: other controllers' as they are, then ours as the compile says.
fn route_status((metadata, status): (&ObjectMeta, Option<&Value>), ours: &[ParentStatus], now: &str) -> Value {
    let generation = metadata.generation;
    let current: &[Value] = (field(status, "parents").and_then(Value::as_array))
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut parents: Vec<Value> = current.iter().filter(|parent| !is_ours(parent)).cloned().collect();
    for parent in ours {
        let parent_ref = serde_json::to_value(&parent.parent_ref).unwrap_or_default();
        let before = current
            .iter()
            .find(|p| is_ours(p) && p.get("parentRef") == Some(&parent_ref))
            .and_then(|p| p.get("conditions"));
        parents.push(json!({
            "parentRef": parent_ref,
            "controllerName": CONTROLLER_NAME,
            "conditions": conditions(&parent.conditions, before, generation, now),
        }));
    }
    json!({ "parents": parents })
}

fn is_ours(parent: &Value) -> bool {
    parent.get("controllerName").and_then(Value::as_str) == Some(CONTROLLER_NAME)
}

fn has_our_parents(status: Option<&Value>) -> bool {
    (field(status, "parents").and_then(Value::as_array)).is_some_and(|parents| parents.iter().any(is_ours))
}

#[cfg(test)]
mod tests;
