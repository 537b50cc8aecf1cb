//! Which GatewayClasses and Gateways are shunt's, and each listener's fate: served on the plain
//! listener (HTTP, port 80), on the TLS one (HTTPS, port 443, a certificate from its
//! `certificateRefs`), on an extra port's (`--gateway-port`, either protocol), or not accepted
//! with the spec's reason.
//!
//! ```text
//! GatewayClass controllerName == shunt.dev/gateway-controller ─▶ ours ─▶ its Gateways
//!   each listener: protocol + port ─▶ Plain | Tls | refused (UnsupportedProtocol, PortUnavailable)
//!                  hostname, allowedRoutes.kinds, certificateRefs (ReferenceGrant) ─▶ conditions
//! ```

use std::{collections::BTreeSet, sync::Arc};

use shunt_spec::HostMatch;

use super::{
    grants::{self, Grants},
    hostnames,
    objects::{Gateway, GatewayClass, Listener, ObjectRef},
    selector::Selector,
    status::{ClassStatus, Condition},
};
use crate::{
    compile::{TlsBuilder, namespace_name},
    status::gateway::SUPPORTED_FEATURES,
};

/// GatewayClasses with this `spec.controllerName` are shunt's.
pub const CONTROLLER_NAME: &str = "shunt.dev/gateway-controller";

/// One listener of one of our Gateways, as the compile serves it.
pub struct Served<'s> {
    pub gateway: &'s Gateway,
    pub listener: &'s Listener,
    /// Terminates TLS (HTTPS); else plain HTTP.
    pub tls: bool,
    /// Served on the extra listener of this port (`--gateway-port`); `None` on 80 and 443.
    pub extra_port: Option<u16>,
    /// `None` matches every host.
    pub hostname: Option<HostMatch>,
    /// Routes attach; false when the listener is not accepted.
    pub accepted: bool,
    /// Routes attached to it are served (accepted, refs resolved, no conflict).
    pub programmed: bool,
    /// Which namespaces' routes may attach: `Same`, `All`, or those a label selector selects.
    pub from: From,
    /// Whether `HTTPRoute` is among the kinds it allows.
    pub takes_http_routes: bool,
    pub takes_grpc_routes: bool,
    /// The Secret its certificate comes from, once resolved.
    pub certificate: Option<(String, String)>,
    pub conditions: Vec<Condition>,
    /// Counted by attachment (allowedRoutes and parentRefs alone, as the spec says).
    pub attached: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum From {
    Same,
    All,
    /// `None`: the selector is missing or invalid (see `selector.rs`), and selects nothing.
    Selector(Option<Selector>),
}

/// Our GatewayClasses, with their status, sorted by name.
pub fn classes(classes: &[Arc<GatewayClass>], ports: &BTreeSet<u16>) -> Vec<(String, ClassStatus)> {
    let mut features = SUPPORTED_FEATURES.to_vec();
    // parentRefs.port reaches a listener on another port only where shunt serves one.
    if !ports.is_empty() {
        features.push("HTTPRouteParentRefPort");
    }
    // A listener on 8080 is served only with an address for it (`--gateway-port 8080=...`).
    if ports.contains(&8080) {
        features.push("GatewayPort8080");
    }
    features.sort_unstable();
    let mut ours: Vec<(String, ClassStatus)> = classes
        .iter()
        .filter(|class| class.spec.controller_name == CONTROLLER_NAME)
        .map(|class| {
            let name = class.metadata.name.clone().unwrap_or_default();
            // shunt's class takes no parameters: a class naming some is not what it serves.
            let condition = match class.spec.parameters_ref {
                Some(_) => Condition::new("Accepted", false, "InvalidParameters"),
                None => Condition::new("Accepted", true, "Accepted"),
            };
            let status = ClassStatus {
                name: name.clone(),
                conditions: vec![condition],
                supported_features: features.clone(),
            };
            (name, status)
        })
        .collect();
    ours.sort_by(|a, b| a.0.cmp(&b.0));
    ours
}

/// The listeners of `gateway` (of an accepted class of ours), in its order.
pub fn listeners<'s>(
    gateway: &'s Gateway,
    grants: &Grants<'_>,
    certificates: &mut TlsBuilder<'_>,
    ports: &BTreeSet<u16>,
) -> Vec<Served<'s>> {
    let mut served: Vec<Served<'s>> = Vec::with_capacity(gateway.spec.listeners.len());
    for listener in &gateway.spec.listeners {
        let mut one = listener_of(gateway, listener, grants, certificates, ports);
        // Two listeners of one Gateway on one port: the later is refused when it speaks another
        // protocol (the spec's ProtocolConflict), or the same one for the same hostname.
        let on_port = || (served.iter()).filter(|earlier| earlier.accepted && earlier.listener.port == listener.port);
        let protocol_clash = on_port().any(|earlier| earlier.listener.protocol != listener.protocol);
        let host_clash = on_port().any(|earlier| earlier.hostname == one.hostname);
        if (protocol_clash || host_clash) && one.accepted {
            one.programmed = false;
            let reason = if protocol_clash {
                "ProtocolConflict"
            } else {
                "HostnameConflict"
            };
            one.conditions.push(Condition::new("Conflicted", true, reason));
        } else {
            one.conditions.push(Condition::new("Conflicted", false, "NoConflicts"));
        }
        let programmed = match (one.programmed, one.accepted) {
            (true, _) => Condition::new("Programmed", true, "Programmed"),
            (false, _) => Condition::new("Programmed", false, "Invalid"),
        };
        one.conditions.push(programmed);
        served.push(one);
    }
    served
}

fn listener_of<'s>(
    gateway: &'s Gateway,
    listener: &'s Listener,
    grants: &Grants<'_>,
    certificates: &mut TlsBuilder<'_>,
    ports: &BTreeSet<u16>,
) -> Served<'s> {
    let hostname = listener.hostname.as_deref().filter(|raw| !raw.is_empty());
    let parsed = hostname.map(hostnames::parse);
    let (from, (takes_http_routes, takes_grpc_routes), kinds_ok) = allowed(listener);
    let mut served = Served {
        gateway,
        listener,
        tls: listener.protocol == "HTTPS",
        extra_port: None,
        hostname: parsed.clone().flatten(),
        accepted: false,
        programmed: false,
        from,
        takes_http_routes,
        takes_grpc_routes,
        certificate: None,
        conditions: Vec::new(),
        attached: 0,
    };
    let refused = match (listener.protocol.as_str(), listener.port) {
        ("HTTP", 80) | ("HTTPS", 443) => None,
        // An extra port (`--gateway-port`) serves HTTP and HTTPS alike: each connection says
        // which by its first byte, and its certificate comes by SNI as on 443.
        ("HTTP" | "HTTPS", port) if u16::try_from(port).is_ok_and(|port| ports.contains(&port)) => {
            served.extra_port = u16::try_from(port).ok();
            None
        }
        // The spec's reason for a port the implementation cannot listen on.
        ("HTTP" | "HTTPS", _) => Some("PortUnavailable"),
        _ => Some("UnsupportedProtocol"),
    };
    let refused = refused.or_else(|| matches!(parsed, Some(None)).then_some("UnsupportedValue"));
    let tls_mode = listener.tls.as_ref().and_then(|tls| tls.mode.as_deref());
    let refused = refused
        .or_else(|| (served.tls && tls_mode.is_some_and(|mode| mode != "Terminate")).then_some("UnsupportedValue"));
    served.accepted = refused.is_none();
    served.conditions.push(Condition::new(
        "Accepted",
        served.accepted,
        refused.unwrap_or("Accepted"),
    ));
    let resolved = if !kinds_ok {
        Err("InvalidRouteKinds")
    } else if served.tls && served.accepted {
        certificate(gateway, listener, grants, certificates).map(|found| served.certificate = Some(found))
    } else {
        Ok(())
    };
    served.programmed = served.accepted && resolved.is_ok();
    served.conditions.push(match resolved {
        Ok(()) => Condition::new("ResolvedRefs", true, "ResolvedRefs"),
        Err(reason) => Condition::new("ResolvedRefs", false, reason),
    });
    served
}

/// `allowedRoutes`: where routes may come from, whether HTTPRoutes and GRPCRoutes may, and whether
/// every kind named is one shunt knows.
fn allowed(listener: &Listener) -> (From, (bool, bool), bool) {
    let allowed = listener.allowed_routes.as_ref();
    let namespaces = allowed.and_then(|allowed| allowed.namespaces.as_ref());
    let from = match namespaces.and_then(|ns| ns.from.as_deref()) {
        Some("All") => From::All,
        Some("Selector") => From::Selector(namespaces.and_then(|ns| ns.selector.as_ref()).and_then(Selector::new)),
        _ => From::Same,
    };
    let kinds = allowed
        .and_then(|allowed| allowed.kinds.as_ref())
        .filter(|kinds| !kinds.is_empty());
    let Some(kinds) = kinds else {
        return (from, (true, true), true);
    };
    let is = |name: &str, kind: &super::objects::RouteGroupKind| {
        kind.kind == name && kind.group.as_deref().unwrap_or(super::objects::GROUP) == super::objects::GROUP
    };
    let takes = |name: &str| kinds.iter().any(|kind| is(name, kind));
    let known = kinds.iter().all(|kind| is("HTTPRoute", kind) || is("GRPCRoute", kind));
    (from, (takes("HTTPRoute"), takes("GRPCRoute")), known)
}

/// The first usable `certificateRefs` entry, or why none is.
fn certificate(
    gateway: &Gateway,
    listener: &Listener,
    grants: &Grants<'_>,
    certificates: &mut TlsBuilder<'_>,
) -> Result<(String, String), &'static str> {
    let (namespace, _) = namespace_name(&gateway.metadata);
    let refs: &[ObjectRef] = listener.tls.as_ref().map_or(&[], |tls| &tls.certificate_refs);
    let mut why = "InvalidCertificateRef";
    for reference in refs {
        let group = reference.group.as_deref().unwrap_or_default();
        let kind = reference.kind.as_deref().unwrap_or("Secret");
        if !group.is_empty() || kind != "Secret" {
            continue;
        }
        let target = reference.namespace.as_deref().unwrap_or(namespace);
        let from = grants::From {
            group: super::objects::GROUP,
            kind: "Gateway",
            namespace,
        };
        let to = grants::To {
            group: "",
            kind: "Secret",
            namespace: target,
            name: &reference.name,
        };
        if !grants.permits(from, to) {
            why = "RefNotPermitted";
            continue;
        }
        if certificates.check(target, &reference.name).is_ok() {
            return Ok((target.to_string(), reference.name.clone()));
        }
    }
    Err(why)
}
