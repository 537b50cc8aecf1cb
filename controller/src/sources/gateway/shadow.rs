//! Gateways of another implementation's GatewayClass (`--shadow-gateway-class`): their routes
//! are served for the in-cluster callers DNS sends to shunt when shunt answers as that
//! implementation would, and refused with a reason when it cannot; no status is written for
//! them (it is that implementation's).
//!
//! ```text
//! GatewayClass (not ours, named by the flag) ─▶ its Gateways' listeners, as ours are built
//! route ─ attach ─▶ shadowed parent ─ ExtensionRef, a listener shunt does not serve,
//!   an unsupported field, not accepted, a host an Ingress holds ─▶ refused (not placed)
//!                                  └─ otherwise ─▶ placed, identical
//! each host ─▶ a HostVerdict (the /shadow format) in `/shadow-gateway`; never in `/gateway`
//! ```

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use shunt_spec::HostMatch;

use super::{
    Kept,
    attachment::{Gateways, Parent},
    listeners::{CONTROLLER_NAME, Served},
    objects::{GatewayClass, HTTPRoute, HTTPRouteFilter},
};
use crate::{compile::namespace_name, shadow::HostVerdict};

/// The refusal a shadowed parent carries once a reason is found (it is never written).
pub const REFUSED: &str = "shunt.dev/ShadowRefused";

/// The name of the admin listener's document (`GET /shadow-gateway`).
pub const DOCUMENT: &str = "shadow-gateway";

/// The classes of `names` that exist and are another implementation's.
pub fn classes<'s>(classes: &'s [std::sync::Arc<GatewayClass>], names: &[String]) -> BTreeSet<&'s str> {
    (classes.iter())
        .filter(|class| class.spec.controller_name != CONTROLLER_NAME)
        .filter_map(|class| class.metadata.name.as_deref())
        .filter(|name| names.iter().any(|wanted| wanted == name))
        .collect()
}

/// Judges each route's shadowed parents: one with a reason is refused, so nothing of it is
/// placed through that parent.
pub fn judge(kept: &mut [Kept<'_>], gateways: &Gateways<'_>, shadowed: &BTreeSet<(String, String)>) {
    for one in kept {
        let route = one.route;
        let unsupported = one.rules.as_ref().err().map(|error| format!("Unsupported: {error}"));
        for parent in &mut one.parents {
            if !shadowed.contains(&parent.gateway) {
                continue;
            }
            let listeners = gateways.get(&parent.gateway).map(Vec::as_slice).unwrap_or_default();
            let mut reasons: Vec<String> = parent
                .refused
                .map(|reason| format!("NotAccepted: {reason}"))
                .into_iter()
                .collect();
            reasons.extend(unsupported.clone());
            reasons.extend(extension_refs(route));
            reasons.extend(unserved_listeners(parent, listeners));
            if !reasons.is_empty() {
                parent.refused = Some(parent.refused.unwrap_or(REFUSED));
            }
            parent.shadow_reasons = reasons;
        }
    }
}

/// Most ExtensionRef reasons one route gives: the tenant writes as many filters as it likes
/// (past the rules' bounds the route is refused as unsupported anyway).
const MAX_EXTENSION_REASONS: usize = 4;

/// The ExtensionRef filters of the route (on rules and on backendRefs), distinct, at most
/// [`MAX_EXTENSION_REASONS`]: another implementation's extension, which shunt cannot reproduce.
fn extension_refs(route: &HTTPRoute) -> Vec<String> {
    let rules = route.spec.rules.iter();
    let filters = rules.flat_map(|rule| {
        let backend = rule.backend_refs.iter().flat_map(|backend| &backend.filters);
        rule.filters.iter().chain(backend)
    });
    let named = filters
        .filter(|filter: &&HTTPRouteFilter| filter.type_ == "ExtensionRef" || filter.extension_ref.is_some())
        .map(|filter| {
            let named = filter.extension_ref.as_ref();
            // As the CRD bounds them (kind 63, name 253), for manifests no API server checked.
            let kind = named.and_then(|reference| reference.kind.as_deref()).unwrap_or("?");
            let name = named.map(|reference| reference.name.as_str()).unwrap_or("?");
            (bounded(kind, 63), bounded(name, 253))
        });
    let distinct: BTreeSet<(&str, &str)> = named.take(64).collect();
    (distinct.into_iter().take(MAX_EXTENSION_REASONS))
        .map(|(kind, name)| format!("ExtensionRef: filter {kind} {name} is the other implementation's extension"))
        .collect()
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn bounded(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The listeners the parentRef names (by sectionName and port) that shunt does not serve.
fn unserved_listeners(parent: &Parent, listeners: &[Served<'_>]) -> Vec<String> {
    let reference = &parent.parent_ref;
    (listeners.iter())
        .filter(|served| {
            let listener = served.listener;
            let section = reference
                .section_name
                .as_ref()
                .is_none_or(|name| *name == listener.name);
            section && reference.port.is_none_or(|port| port == listener.port) && !served.accepted
        })
        .map(|served| {
            let listener = served.listener;
            format!(
                "Listener: {} ({} on port {}) is not one shunt serves",
                listener.name, listener.protocol, listener.port
            )
        })
        .collect()
}

/// A verdict per host the shadowed parents of `kept` name, sorted by host: the hosts each
/// serves through its listeners, or for a refused one the route's hostnames as written (none:
/// a catch-all, `*`, reported and never sent to shunt by DNS).
pub fn verdicts(
    kept: &[Kept<'_>],
    gateways: &Gateways<'_>,
    shadowed: &BTreeSet<(String, String)>,
) -> Vec<Arc<HostVerdict>> {
    let mut by_host: BTreeMap<String, HostVerdict> = BTreeMap::new();
    let mut classes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for one in kept {
        let (namespace, name) = namespace_name(&one.route.metadata);
        for (at, parent) in one.parents.iter().enumerate() {
            if !shadowed.contains(&parent.gateway) {
                continue;
            }
            let class = gateways[&parent.gateway]
                .first()
                .map(|served| served.gateway.spec.gateway_class_name.clone());
            let mut reasons = parent.shadow_reasons.clone();
            if one.held.contains(&at) {
                reasons.push("IngressConflict: an Ingress holds a host of this route".to_string());
            }
            for (host, listener) in hosts(one.route, parent, gateways) {
                let verdict = by_host
                    .entry(host.to_string())
                    .or_insert_with(|| HostVerdict::new(host.to_string(), host.clone()));
                verdict.ingresses.push(format!("{} {namespace}/{name}", one.kind));
                classes.entry(host.to_string()).or_default().extend(class.clone());
                verdict.reasons.extend(reasons.iter().cloned());
                if let Some(listener) = listener {
                    verdict.add_listener(listener);
                }
            }
        }
    }
    let mut verdicts: Vec<HostVerdict> = by_host.into_values().collect();
    for verdict in &mut verdicts {
        if let Some(classes) = classes.remove(&verdict.host) {
            verdict.classes = classes.into_iter().collect::<Vec<_>>().into();
        }
        verdict.settle();
    }
    verdicts.into_iter().map(Arc::new).collect()
}

/// The hosts `parent` serves with the listener side (`http`, `https`), or the route's
/// hostnames as written when it serves none.
fn hosts(route: &HTTPRoute, parent: &Parent, gateways: &Gateways<'_>) -> Vec<(HostMatch, Option<&'static str>)> {
    let served: Vec<(HostMatch, Option<&'static str>)> = (parent.attached.iter())
        .filter(|_| parent.refused.is_none())
        .flat_map(|((gateway, index), hosts)| {
            let side = if gateways[gateway][*index].tls { "https" } else { "http" };
            hosts.iter().map(move |host| (host.clone(), Some(side)))
        })
        .collect();
    if !served.is_empty() {
        return served;
    }
    let written = route.spec.hostnames.iter().take(16);
    let mut hosts: Vec<(HostMatch, Option<&'static str>)> = written
        .filter_map(|host| super::hostnames::parse(host))
        .map(|host| (host, None))
        .collect();
    if route.spec.hostnames.is_empty() {
        hosts.push((HostMatch::Any, None));
    }
    hosts
}

#[cfg(test)]
mod tests;
