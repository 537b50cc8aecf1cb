//! The status shunt would write for the Gateway API objects it owns, as plain data: computed
//! by the compile (pure), served as JSON at `/gateway` on the admin listener, and later written
//! to the API server by the leader. The JSON names are the API's (`gatewayClasses`,
//! `attachedRoutes`, `parentRef`, condition `type`/`status`/`reason`): operators and tests read them.

use serde::Serialize;

use super::objects::ParentRef;

/// The `/gateway` document.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// Sorted by name.
    pub gateway_classes: Vec<ClassStatus>,
    /// Sorted by namespace and name.
    pub gateways: Vec<GatewayEntry>,
    /// Sorted by namespace and name.
    pub routes: Vec<RouteStatus>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassStatus {
    pub name: String,
    pub conditions: Vec<Condition>,
    /// What `supportedFeatures` claims, sorted: the features `tests/e2e/gateway/` reproduces
    /// that this configuration serves.
    pub supported_features: Vec<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GatewayEntry {
    pub namespace: String,
    pub name: String,
    pub conditions: Vec<Condition>,
    pub listeners: Vec<ListenerStatus>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerStatus {
    pub name: String,
    pub attached_routes: u32,
    pub conditions: Vec<Condition>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteStatus {
    /// `HTTPRoute`.
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    /// The route's `metadata.generation` as the compile read it: what each condition's
    /// `observedGeneration` says when written (absent from a manifest without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    pub parents: Vec<ParentStatus>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentStatus {
    pub parent_ref: ParentRef,
    pub conditions: Vec<Condition>,
}

/// One condition, as `metav1.Condition` spells its first three fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// `True` or `False`.
    pub status: &'static str,
    pub reason: &'static str,
}

// === impl Condition ===

impl Condition {
    pub const fn new(type_: &'static str, holds: bool, reason: &'static str) -> Condition {
        Condition {
            type_,
            status: if holds { "True" } else { "False" },
            reason,
        }
    }

    pub fn holds(&self) -> bool {
        self.status == "True"
    }
}

// === impl GatewayStatus ===

impl GatewayStatus {
    pub fn is_empty(&self) -> bool {
        self.gateway_classes.is_empty() && self.gateways.is_empty() && self.routes.is_empty()
    }

    /// The document's text, as the table publishes it.
    pub fn text(&self) -> shunt_spec::Document {
        shunt_spec::Document::new(
            &serde_json::to_string(self).expect("the status holds only strings, numbers and lists"),
        )
    }

    /// The conditions of `route`'s parent `parent`, for tests and logs.
    pub fn parent(&self, route: (&str, &str), parent: &str) -> Option<&[Condition]> {
        let route = self
            .routes
            .iter()
            .find(|entry| (entry.namespace.as_str(), entry.name.as_str()) == route)?;
        let found = route.parents.iter().find(|entry| entry.parent_ref.name == parent)?;
        Some(&found.conditions)
    }
}
