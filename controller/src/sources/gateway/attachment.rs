//! An HTTPRoute's `parentRefs` against our Gateways' listeners: which listeners it attaches
//! to, the hosts it serves through each, and its parent's `Accepted` condition.
//!
//! ```text
//! parentRef (group/kind Gateway, namespace, name) ─ not one of ours ─▶ ignored (another controller's)
//!   ├ sectionName, port ─▶ candidate listeners (none: NoMatchingParent)
//!   ├ accepted listeners whose allowedRoutes take the route (none: NotAllowedByListeners)
//!   └ hostnames intersected with each (none: NoMatchingListenerHostname) ─▶ Attached
//! ```

use std::collections::BTreeMap;

use shunt_spec::HostMatch;

use super::{
    hostnames,
    listeners::{From, Served},
    objects::{GROUP, HTTPRoute, ParentRef},
};
use crate::{compile::namespace_name, objects::Namespace};

/// Our Gateways' listeners by Gateway (namespace, name).
pub type Gateways<'s> = BTreeMap<(String, String), Vec<Served<'s>>>;

/// What one parentRef of a route gives.
pub struct Parent {
    pub parent_ref: ParentRef,
    /// The Gateway's (namespace, name).
    pub gateway: (String, String),
    /// Of a shadowed Gateway only: why shunt cannot answer as its implementation would.
    pub shadow_reasons: Vec<String>,
    /// The reason the route is not accepted by this parent, if it is not.
    pub refused: Option<&'static str>,
    /// The hosts it serves through each listener it attached to, (gateway, listener index).
    pub attached: Vec<(Listener, Vec<HostMatch>)>,
}

/// A listener: its Gateway's key and its index.
pub type Listener = ((String, String), usize);

/// The route's parents that are Gateways of ours, each judged; `hostnames` are the route's,
/// parsed (an unparsable one never intersects). Counts attachments on the listeners.
pub fn attach(
    (route, route_kind): (&HTTPRoute, &str),
    hostnames: &[HostMatch],
    gateways: &mut Gateways<'_>,
    namespaces: &Namespaces<'_>,
) -> Vec<Parent> {
    let (namespace, _) = namespace_name(&route.metadata);
    let mut parents = Vec::new();
    for parent_ref in &route.spec.parent_refs {
        let group = parent_ref.group.as_deref().unwrap_or(GROUP);
        let kind = parent_ref.kind.as_deref().unwrap_or("Gateway");
        if group != GROUP || kind != "Gateway" {
            continue;
        }
        let key = (
            parent_ref.namespace.clone().unwrap_or_else(|| namespace.to_string()),
            parent_ref.name.clone(),
        );
        let Some(listeners) = gateways.get_mut(&key) else {
            continue;
        };
        let mut parent = Parent {
            parent_ref: parent_ref.clone(),
            gateway: key.clone(),
            shadow_reasons: Vec::new(),
            refused: None,
            attached: Vec::new(),
        };
        let candidates: Vec<usize> = (0..listeners.len())
            .filter(|&at| {
                let listener = listeners[at].listener;
                parent_ref
                    .section_name
                    .as_ref()
                    .is_none_or(|name| *name == listener.name)
                    && parent_ref.port.is_none_or(|port| port == listener.port)
            })
            .collect();
        if candidates.is_empty() {
            parent.refused = Some("NoMatchingParent");
            parents.push(parent);
            continue;
        }
        let mut allowed = 0;
        for at in candidates {
            let listener = &mut listeners[at];
            if !allows(listener, (route_kind, namespace), namespaces) {
                continue;
            }
            allowed += 1;
            let hosts = hostnames::intersect(listener.hostname.as_ref(), hostnames);
            if hosts.is_empty() {
                continue;
            }
            // Counted only where it is accepted, as httproute-hostname-intersection requires:
            // a route whose hostnames miss the listener's is not attached to it.
            listener.attached += 1;
            if listener.accepted {
                parent.attached.push(((key.clone(), at), hosts));
            }
        }
        parent.refused = match (allowed, parent.attached.is_empty()) {
            (0, _) => Some("NotAllowedByListeners"),
            (_, true) => Some("NoMatchingListenerHostname"),
            _ => None,
        };
        parents.push(parent);
    }
    parents
}

/// Whether `listener`'s allowedRoutes take a route of `kind` from `namespace`. A selector
/// judges the Namespace's labels; a namespace shunt has no object for is selected by none.
fn allows(listener: &Served<'_>, (kind, namespace): (&str, &str), namespaces: &Namespaces<'_>) -> bool {
    let same = namespace_name(&listener.gateway.metadata).0 == namespace;
    let takes = match kind {
        "GRPCRoute" => listener.takes_grpc_routes,
        _ => listener.takes_http_routes,
    };
    takes
        && match &listener.from {
            From::All => true,
            From::Same => same,
            From::Selector(None) => false,
            From::Selector(Some(selector)) => namespaces.get(namespace).is_some_and(|object| {
                let labels = object.metadata.labels.as_ref();
                selector.matches_namespace(Some(namespace), labels.unwrap_or(&BTreeMap::new()))
            }),
        }
}

/// The Namespaces by name, for listeners that select routes' namespaces by label.
pub type Namespaces<'s> = BTreeMap<&'s str, &'s Namespace>;

/// `namespaces` by name.
pub fn namespaces(namespaces: &[std::sync::Arc<Namespace>]) -> Namespaces<'_> {
    let named = namespaces
        .iter()
        .filter_map(|o| Some((o.metadata.name.as_deref()?, &**o)));
    named.collect()
}
