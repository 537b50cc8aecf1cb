//! Gateway API: shunt as the implementation of GatewayClasses whose `controllerName` is
//! `shunt.dev/gateway-controller`. Their Gateways' HTTP (port 80) and HTTPS (port 443)
//! listeners are shunt's plain and TLS listeners; the HTTPRoutes attached to them compile into
//! the same table as the Ingresses, through the contract's route behaviours; the status shunt
//! would write is plain data, published at `/gateway`.
//!
//! ```text
//! GatewayClass ─ ours? ─▶ Gateway ─ listeners.rs ─▶ listeners (accepted, programmed, certificate)
//! HTTPRoute (GRPCRoute in its shape: grpc/) ─ attachment.rs: parentRefs, allowedRoutes, hostnames ─▶ hosts per listener
//!           ─ rules.rs: matches.rs, filters.rs, backends.rs (grants.rs) ─▶ entries
//! (host, entries) ─ hosts.rs: precedence ─▶ ranked VirtualHostSpecs ─▶ the table, unless an
//!   Ingress holds the host (the Ingress keeps it; the route's parent says so)
//! every verdict ─ status.rs ─▶ /gateway
//! ```
//! The whole layer is compiled again at every compile while any Gateway API object exists (the
//! incremental compile keeps no per-route state yet): its cost is that of compiling every
//! route, paid only by clusters that have some.

mod attachment;
mod backends;
mod cors;
mod filters;
mod grants;
pub mod grpc;
pub mod hostnames;
mod hosts;
mod listeners;
mod matches;
mod mirror;
pub mod objects;
mod rules;
mod selector;
mod shadow;
pub mod status;
mod timeouts;

#[cfg(test)]
mod tests;

use std::{
    collections::{BTreeMap, BTreeSet, HashSet},
    sync::Arc,
};

use shunt_spec::{BackendId, BackendSpec, Document, HostMatch, Listeners, PortHosts, TableSpec, VirtualHostSpec};

use self::{
    attachment::{Gateways, Parent},
    grants::Grants,
    hosts::{Builders, Placed, RouteOrder},
    objects::HTTPRoute,
    rules::RouteRules,
    status::{Condition, GatewayEntry, ListenerStatus, ParentStatus, RouteStatus},
};
pub use self::{listeners::CONTROLLER_NAME, shadow::DOCUMENT as SHADOW_DOCUMENT, status::GatewayStatus};
use crate::compile::{Backends, ClusterState, Resolved, TlsBuilder, namespace_name};

/// The name of the admin listener's document (`GET /gateway`).
pub const DOCUMENT: &str = "gateway";

/// What the Gateway API objects add to a compile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layer {
    /// Sorted by host; none of them a host the Ingresses hold.
    pub hosts: Vec<Arc<VirtualHostSpec>>,
    /// The extra ports' hosts (`--gateway-port`), by port, each sorted by host.
    pub ports: BTreeMap<u16, Vec<Arc<VirtualHostSpec>>>,
    /// Every backend those hosts name.
    pub backends: BTreeMap<BackendId, BackendSpec>,
    /// Of ours only: shadowed Gateways and their routes get none.
    pub status: GatewayStatus,
    /// A verdict per host of the shadowed Gateways' routes (`--shadow-gateway-class`).
    pub shadow: Vec<Arc<crate::shadow::HostVerdict>>,
    /// Their `/shadow` document, when there are any: written when first read, and kept from
    /// the last layer while the verdicts are equal ([`Layer::keep_report`]).
    pub report: Option<Document>,
}

/// One route on its way through the compile.
struct Kept<'s> {
    /// A GRPCRoute in HTTPRoute's shape (`grpc.rs`) when `kind` says so.
    route: &'s HTTPRoute,
    kind: &'static str,
    order: RouteOrder,
    parents: Vec<Parent>,
    rules: Result<RouteRules, String>,
    /// Some host of each parent (by index) is held by an Ingress.
    held: BTreeSet<usize>,
}

/// Whether `state` holds any Gateway API object: only then is there a layer to compile.
pub fn has_objects(state: &ClusterState) -> bool {
    !(state.gateway_classes.is_empty()
        && state.gateways.is_empty()
        && state.http_routes.is_empty()
        && state.grpc_routes.is_empty()
        && state.reference_grants.is_empty())
}

/// Compiles the Gateway API objects of `state`; `table` holds the Ingresses' hosts, which keep
/// theirs. Certificates of HTTPS listeners are bound in `certificates`, after the Ingresses'.
/// Gateways of the `shadow_classes` (another implementation's) are served in shadow.
pub fn compile(
    state: &ClusterState,
    table: &TableSpec,
    certificates: &mut TlsBuilder<'_>,
    (shadow_classes, ports): (&[String], &BTreeSet<u16>),
) -> Option<Layer> {
    if !has_objects(state) {
        return None;
    }
    let named = named_services(state);
    let mut backends = Backends::only(state, &named);
    let grants = Grants::new(&state.reference_grants);
    let classes = listeners::classes(&state.gateway_classes, ports);
    let accepted: BTreeSet<&str> = (classes.iter())
        .filter(|(_, status)| status.conditions.iter().all(Condition::holds))
        .map(|(name, _)| name.as_str())
        .collect();
    let shadow_classes = shadow::classes(&state.gateway_classes, shadow_classes);
    let mut shadowed = BTreeSet::new();
    let mut gateways: Gateways<'_> = BTreeMap::new();
    let mut refused_gateways = Vec::new();
    for gateway in &state.gateways {
        let (namespace, name) = namespace_name(&gateway.metadata);
        let key = (namespace.to_string(), name.to_string());
        let class = gateway.spec.gateway_class_name.as_str();
        if accepted.contains(class) {
            gateways.insert(key, listeners::listeners(gateway, &grants, certificates, ports));
        } else if classes.iter().any(|(name, _)| name == class) {
            refused_gateways.push(key);
        } else if shadow_classes.contains(class) {
            gateways.insert(key.clone(), listeners::listeners(gateway, &grants, certificates, ports));
            shadowed.insert(key);
        }
    }
    let shaped: Vec<grpc::Shaped> = state.grpc_routes.iter().map(|route| grpc::shape(route)).collect();
    let mut kept = attach_routes((state, &shaped), &mut gateways, &grants, &mut backends);
    shadow::judge(&mut kept, &gateways, &shadowed);
    let held = |host: &HostMatch| table.hosts.binary_search_by(|vhost| vhost.host.cmp(host)).is_ok();
    let mut builders = Builders::default();
    for one in &mut kept {
        place(one, &gateways, &held, certificates, &mut builders);
    }
    let (hosts, ports) = builders.finish();
    let resolved = kept
        .iter()
        .filter_map(|one| one.rules.as_ref().ok())
        .flat_map(|rules| &rules.resolved);
    let backends = hosts_backends(hosts.iter().chain(ports.values().flatten()), resolved);
    let shadow = shadow::verdicts(&kept, &gateways, &shadowed);
    let status = status_of(classes, &gateways, refused_gateways, &kept, &shadowed);
    let report = (!shadow.is_empty()).then(|| {
        let served = crate::shadow::report::Served {
            profile: "gateway".to_string(),
            ..Default::default()
        };
        crate::shadow::report::deferred(served, shadow.clone().into(), Arc::new([]))
    });
    Some(Layer {
        hosts,
        ports,
        backends,
        status,
        shadow,
        report,
    })
}

// === impl Layer ===

impl Layer {
    /// Takes `last`'s report when the verdicts are the same: the publisher then sees the same
    /// document, without reading either.
    pub fn keep_report(&mut self, last: &Layer) {
        if self.shadow == last.shadow {
            self.report.clone_from(&last.report);
        }
    }
}

/// Adds `layer` to `table`: its hosts, backends and the `/gateway` document.
pub fn merge(layer: &Layer, table: &mut TableSpec) {
    if !layer.hosts.is_empty() {
        table.hosts.extend(layer.hosts.iter().cloned());
        table.hosts.sort_by(|a, b| a.host.cmp(&b.host));
    }
    for (&port, hosts) in &layer.ports {
        table.ports.insert(port, PortHosts(hosts.clone()));
    }
    for (id, spec) in &layer.backends {
        table.backends.entry(id.clone()).or_insert_with(|| spec.clone());
    }
    table.documents.insert(DOCUMENT.to_string(), layer.status.text());
    if let Some(report) = &layer.report {
        (table.documents).insert(shadow::DOCUMENT.to_string(), report.clone());
    }
}

/// The routes attached to our Gateways, in precedence order (oldest first, then by name),
/// HTTPRoutes and GRPCRoutes (`shaped`) together: of two kinds on one listener and hostname,
/// the first keeps it (`grpc/conflicts.rs`).
fn attach_routes<'s>(
    (state, shaped): (&'s ClusterState, &'s [grpc::Shaped]),
    gateways: &mut Gateways<'s>,
    grants: &Grants<'_>,
    backends: &mut Backends<'_>,
) -> Vec<Kept<'s>> {
    let namespaces = attachment::namespaces(&state.namespaces);
    let http = state.http_routes.iter().map(|route| (order(route), &**route, None));
    let grpc = shaped.iter().map(|one| (order(&one.route), &one.route, Some(one)));
    let mut routes: Vec<(RouteOrder, &HTTPRoute, Option<&grpc::Shaped>)> = http.chain(grpc).collect();
    routes.sort_by(|a, b| a.0.cmp(&b.0));
    let mut kept = Vec::new();
    let mut claims = grpc::conflicts::Claims::default();
    for (order, route, grpc_route) in routes {
        let kind = if grpc_route.is_some() { grpc::KIND } else { "HTTPRoute" };
        let raw = &route.spec.hostnames;
        let parsed: Vec<HostMatch> = raw.iter().filter_map(|host| hostnames::parse(host)).collect();
        let mut parents = attachment::attach((route, kind), &parsed, gateways, &namespaces);
        if parents.is_empty() {
            continue;
        }
        let rules = match (parsed.len() == raw.len(), raw.len() <= 16, grpc_route) {
            (true, true, None) => rules::compile(route, grants, backends),
            (true, true, Some(shaped)) => grpc::compile(shaped, grants, backends),
            _ => Err("hostnames must be at most 16 DNS names".to_string()),
        };
        if rules.is_ok() {
            claims.judge(kind, &mut parents, gateways);
        }
        kept.push(Kept {
            route,
            kind,
            order,
            parents,
            rules,
            held: BTreeSet::new(),
        });
    }
    kept
}

/// Places one route's entries on the hosts its accepted parents serve through programmed
/// listeners, and binds the TLS listeners' certificates to those hosts.
fn place<'k>(
    one: &'k mut Kept<'_>,
    gateways: &Gateways<'_>,
    held: &impl Fn(&HostMatch) -> bool,
    certificates: &mut TlsBuilder<'_>,
    builders: &mut Builders<'k>,
) {
    let Ok(rules) = &one.rules else { return };
    let source = &one.order.2;
    let mut by_host: BTreeMap<(Option<u16>, HostMatch), Listeners> = BTreeMap::new();
    for (at, parent) in one.parents.iter().enumerate() {
        if parent.refused.is_some() {
            continue;
        }
        for ((gateway, index), hosts) in &parent.attached {
            let listener = &gateways[gateway][*index];
            if !listener.programmed {
                continue;
            }
            for host in hosts {
                // An extra port's hosts are its own: an Ingress never holds them.
                if listener.extra_port.is_none() && held(host) {
                    one.held.insert(at);
                    continue;
                }
                let side = if listener.tls { Listeners::Tls } else { Listeners::Plain };
                let key = (listener.extra_port, host.clone());
                let joined = match by_host.get(&key) {
                    Some(&known) if known != side => Listeners::Both,
                    _ => side,
                };
                by_host.insert(key, joined);
                match &listener.certificate {
                    // Any host: the certificate is offered for the names it holds.
                    Some((namespace, name)) if *host == HostMatch::Any => {
                        certificates.bind_names(namespace, name, source);
                    }
                    Some((namespace, name)) => {
                        // A host the certificate does not cover gets the default one: not an error.
                        let _ = certificates.bind(&certificate_host(host), namespace, name, source);
                    }
                    None => {}
                }
            }
        }
    }
    for ((port, host), listeners) in by_host {
        let builder = match port {
            None => &mut builders.main,
            Some(port) => builders.ports.entry(port).or_default(),
        };
        for entry in &rules.entries {
            builder.place(
                host.clone(),
                Placed {
                    listeners,
                    route: &one.order,
                    entry,
                },
            );
        }
    }
}

/// The name a certificate is bound to for `host`: a routing wildcard (one or more labels) as
/// the certificate wildcard it is served under.
fn certificate_host(host: &HostMatch) -> HostMatch {
    match host {
        HostMatch::DeepWildcard(suffix) => HostMatch::Wildcard(suffix.clone()),
        other => other.clone(),
    }
}

fn order(route: &HTTPRoute) -> RouteOrder {
    let created = route.metadata.creation_timestamp.as_ref().map(|time| time.0);
    let (namespace, name) = namespace_name(&route.metadata);
    (created.is_none(), created, format!("{namespace}/{name}"))
}

/// The Services any route's backendRefs name, to index only those.
fn named_services(state: &ClusterState) -> HashSet<(&str, &str)> {
    let mut named: HashSet<(&str, &str)> = grpc::named_services(&state.grpc_routes).collect();
    for route in &state.http_routes {
        let (namespace, _) = namespace_name(&route.metadata);
        let mirrors = (route.spec.rules.iter()).flat_map(|rule| &rule.filters);
        let mirrors = mirrors.filter_map(|filter| filter.request_mirror.as_ref().map(|mirror| &mirror.backend_ref));
        let refs = route.spec.rules.iter().flat_map(|rule| &rule.backend_refs);
        for reference in refs.chain(mirrors) {
            named.insert((
                reference.namespace.as_deref().unwrap_or(namespace),
                reference.name.as_str(),
            ));
        }
    }
    named
}

/// The backends the kept hosts name, from those the routes resolved.
fn hosts_backends<'h, 'r>(
    hosts: impl Iterator<Item = &'h Arc<VirtualHostSpec>>,
    resolved: impl Iterator<Item = &'r Arc<Resolved>>,
) -> BTreeMap<BackendId, BackendSpec> {
    let resolved: BTreeMap<&str, &Resolved> = resolved.map(|one| (one.id.as_str(), &**one)).collect();
    let mut named = BTreeMap::new();
    for path in hosts.flat_map(|vhost| &vhost.paths) {
        let split = path.options.split.iter().flat_map(|split| split.backends());
        let mirrors =
            (path.options.mirror.iter()).flat_map(|mirror| mirror.targets.iter().map(|target| &target.backend));
        for id in std::iter::once(&path.backend).chain(split).chain(mirrors) {
            if let Some(found) = resolved.get(id.as_str()) {
                named.entry(id.clone()).or_insert_with(|| found.spec.clone());
            }
        }
    }
    named
}

fn status_of(
    classes: Vec<(String, status::ClassStatus)>,
    gateways: &Gateways<'_>,
    refused: Vec<(String, String)>,
    kept: &[Kept<'_>],
    shadowed: &BTreeSet<(String, String)>,
) -> GatewayStatus {
    let mut entries: Vec<GatewayEntry> = gateways
        .iter()
        .filter(|(key, _)| !shadowed.contains(*key))
        .map(|((namespace, name), listeners)| gateway_entry(namespace, name, listeners))
        .collect();
    entries.extend(refused.into_iter().map(|(namespace, name)| GatewayEntry {
        namespace,
        name,
        conditions: vec![
            Condition::new("Accepted", false, "Invalid"),
            Condition::new("Programmed", false, "Invalid"),
        ],
        listeners: Vec::new(),
    }));
    entries.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let mut routes: Vec<RouteStatus> = (kept.iter()).filter_map(|one| route_status(one, shadowed)).collect();
    routes.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    GatewayStatus {
        gateway_classes: classes.into_iter().map(|(_, status)| status).collect(),
        gateways: entries,
        routes,
    }
}

fn gateway_entry(namespace: &str, name: &str, listeners: &[listeners::Served<'_>]) -> GatewayEntry {
    let accepted = listeners.iter().filter(|listener| listener.accepted).count();
    let accepted_condition = match (accepted, listeners.len()) {
        (all, total) if all == total => Condition::new("Accepted", true, "Accepted"),
        (0, _) => Condition::new("Accepted", false, "ListenersNotValid"),
        _ => Condition::new("Accepted", true, "ListenersNotValid"),
    };
    let programmed = match listeners.iter().any(|listener| listener.programmed) {
        true => Condition::new("Programmed", true, "Programmed"),
        false => Condition::new("Programmed", false, "Invalid"),
    };
    GatewayEntry {
        namespace: namespace.to_string(),
        name: name.to_string(),
        conditions: vec![accepted_condition, programmed],
        listeners: listeners
            .iter()
            .map(|listener| ListenerStatus {
                name: listener.listener.name.clone(),
                attached_routes: listener.attached,
                conditions: listener.conditions.clone(),
            })
            .collect(),
    }
}

/// `None` when every parent is a shadowed Gateway: that status is the other implementation's.
fn route_status(one: &Kept<'_>, shadowed: &BTreeSet<(String, String)>) -> Option<RouteStatus> {
    let (namespace, name) = namespace_name(&one.route.metadata);
    let ours = one.parents.iter().enumerate();
    let ours: Vec<(usize, &Parent)> = ours.filter(|(_, parent)| !shadowed.contains(&parent.gateway)).collect();
    if ours.is_empty() {
        return None;
    }
    let parents = ours.into_iter().map(|(at, parent)| {
        let accepted = match (parent.refused, &one.rules) {
            (Some(reason), _) => Condition::new("Accepted", false, reason),
            (None, Err(_)) => Condition::new("Accepted", false, "UnsupportedValue"),
            (None, Ok(_)) => Condition::new("Accepted", true, "Accepted"),
        };
        let unresolved = one.rules.as_ref().ok().and_then(|rules| rules.unresolved);
        let resolved = match unresolved {
            Some(reason) => Condition::new("ResolvedRefs", false, reason),
            None => Condition::new("ResolvedRefs", true, "ResolvedRefs"),
        };
        let mut conditions = vec![accepted, resolved];
        if one.held.contains(&at) {
            // shunt's own condition: an Ingress holds a host this parent would serve.
            conditions.push(Condition::new(
                "shunt.dev/IngressConflict",
                true,
                "HostnameHeldByIngress",
            ));
        }
        ParentStatus {
            parent_ref: parent.parent_ref.clone(),
            conditions,
        }
    });
    Some(RouteStatus {
        kind: one.kind,
        namespace: namespace.to_string(),
        name: name.to_string(),
        observed_generation: one.route.metadata.generation,
        parents: parents.collect(),
    })
}
