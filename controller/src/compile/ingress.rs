//! One Ingress into the table: its default backend, then each rule and path in order. Every
//! problem becomes a [`Diagnostic`] and skips only the rule or path it concerns.
//!
//! ```text
//! Ingress ─contribution─▶ events (reports, claims with resolved backends) ─claims settled─▶ diagnostics
//! ```
//! The walk only reads the Ingress and the backends it names, so its events can be kept and
//! replayed (the incremental compile); whether a claim wins depends on who claimed before.

use std::{collections::BTreeSet, fmt, sync::Arc};

use crate::objects::Ingress;
use crate::objects::{HTTPIngressPath, IngressBackend, IngressRule};
use shunt_spec::{BackendId, HostMatch, PathKind};

use super::{
    Diagnostic, Reason,
    annotations::{self, IngressAnnotations},
    backend::{Backends, Resolved},
    claims::{PathClaim, RouteSettings},
    namespace_name, paths,
    table::TableBuilder,
};

/// What every Ingress of one compile writes into.
pub struct Sink<'a> {
    pub backends: Backends<'a>,
    pub table: TableBuilder,
    pub diagnostics: Vec<Diagnostic>,
}

/// What one Ingress asks of the table, in walk order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contribution {
    pub events: Vec<Event>,
    /// The Services (namespace, name) its backends name, found or not: a change to one of them
    /// or to their EndpointSlices changes this contribution.
    pub services: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A problem found whatever the other Ingresses claim.
    Report(Diagnostic),
    Path(PathClaim),
    Default(Arc<Resolved>),
}

/// Where in an Ingress a problem is, for messages.
#[derive(Clone, Copy)]
enum Place<'p> {
    Path { host: &'p HostMatch, path: &'p str },
    DefaultBackend,
}

/// One Ingress being walked.
struct Walk<'s, 'a> {
    backends: &'s mut Backends<'a>,
    namespace: &'s str,
    name: &'s str,
    annotations: IngressAnnotations,
    out: Contribution,
}

/// Walks `ingress` and claims in `sink`'s table (the full compile).
pub fn compile_ingress(ingress: &Ingress, sink: &mut Sink<'_>) {
    let contribution = contribution(ingress, &mut sink.backends);
    let (namespace, name) = namespace_name(&ingress.metadata);
    // Once per Ingress: concatenated, not formatted (`fmt` costs far more per call).
    let source = [namespace, "/", name].concat();
    let table = &mut sink.table;
    let holders: Vec<Option<String>> = contribution
        .events
        .iter()
        .map(|event| match event {
            Event::Report(_) => None,
            Event::Path(claim) => table.claim(claim, &source).err(),
            Event::Default(backend) => table.claim_default(backend, &source).err(),
        })
        .collect();
    settle(
        (namespace, name),
        &contribution.events,
        |index| holders[index].as_deref(),
        &mut sink.diagnostics,
    );
}

/// The events of `ingress`, resolving its backends through `backends`.
pub fn contribution(ingress: &Ingress, backends: &mut Backends<'_>) -> Contribution {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let mut out = Contribution {
        events: Vec::new(),
        services: Vec::new(),
    };
    let Some(spec) = &ingress.spec else { return out };
    let (parsed, bad) = annotations::parse(ingress);
    for bad in bad {
        let message = format!(
            "annotation {} is {:?}, expected {}; ignored",
            bad.key, bad.value, bad.expected
        );
        out.events.push(Event::Report(Diagnostic::new(
            namespace,
            name,
            Reason::InvalidAnnotation,
            message,
        )));
    }
    let mut walk = Walk {
        backends,
        namespace,
        name,
        annotations: parsed,
        out,
    };
    if let Some(backend) = &spec.default_backend {
        walk.default_backend(backend);
    }
    for rule in spec.rules.iter().flatten() {
        walk.rule(rule);
    }
    walk.out
}

/// Appends the diagnostics of `events` once their claims are settled: `holder(i)` names the
/// Ingress (`namespace/name`) holding the slot event `i` claimed, `None` when the claim won.
pub fn settle<'h>(
    (namespace, name): (&str, &str),
    events: &[Event],
    mut holder: impl FnMut(usize) -> Option<&'h str>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    // Backends already reported as `NoEndpoints` for this Ingress.
    let mut empty_reported: BTreeSet<&BackendId> = BTreeSet::new();
    let source = || format!("{namespace}/{name}");
    let mut report = |reason, message| diagnostics.push(Diagnostic::new(namespace, name, reason, message));
    for (index, event) in events.iter().enumerate() {
        let (backend, place) = match event {
            Event::Report(diagnostic) => {
                report(diagnostic.reason, diagnostic.message.clone());
                continue;
            }
            Event::Path(claim) => (
                claim.backend.as_ref(),
                Place::Path {
                    host: &claim.host,
                    path: &claim.path,
                },
            ),
            Event::Default(backend) => (Some(backend), Place::DefaultBackend),
        };
        match holder(index) {
            None => {
                // Reported once per Ingress, at its first use that won; a redirect has no backend.
                if let Some(backend) = backend
                    && backend.spec.endpoints.is_empty()
                    && empty_reported.insert(&backend.id)
                {
                    report(
                        Reason::NoEndpoints,
                        format!("backend {:?} has no ready endpoints for {place}", backend.id),
                    );
                }
            }
            Some(holder) => {
                let holder = holder_name(holder, &source());
                let message = match event {
                    Event::Path(claim) => {
                        let kind = match claim.kind {
                            PathKind::Exact => "exact",
                            PathKind::Prefix => "prefix",
                            PathKind::CharPrefix => "character prefix",
                            PathKind::Regex => "regex",
                        };
                        format!("{kind} {place} is already routed by {holder}")
                    }
                    _ => format!("default backend is already set by {holder}"),
                };
                report(Reason::Conflict, message);
            }
        }
    }
}

// === impl Walk ===

impl Walk<'_, '_> {
    fn default_backend(&mut self, backend: &IngressBackend) {
        if let Some(resolved) = self.resolve(backend, Place::DefaultBackend) {
            self.out.events.push(Event::Default(resolved));
        }
    }

    fn rule(&mut self, rule: &IngressRule) {
        let raw = rule.host.as_deref().unwrap_or_default();
        let host = match paths::parse_host(raw) {
            Ok(host) => host,
            Err(error) => {
                return self.report(
                    Reason::InvalidHost,
                    format!("invalid host {raw:?}, rule skipped: {error}"),
                );
            }
        };
        // A rule with a host but no `http` routes nothing (it may exist only for TLS).
        for path in rule.http.iter().flat_map(|http| &http.paths) {
            self.path(&host, path);
        }
    }

    fn path(&mut self, host: &HostMatch, path: &HTTPIngressPath) {
        let (kind, normalised) = match paths::parse_path(path.path.as_deref(), &path.path_type) {
            Ok(parsed) => parsed,
            Err(error) => {
                let raw = path.path.as_deref().unwrap_or_default();
                let message = format!("invalid {}: {error}", Place::Path { host, path: raw });
                return self.report(Reason::InvalidPath, message);
            }
        };
        let place = Place::Path {
            host,
            path: &normalised,
        };
        let Some(backend) = self.resolve(&path.backend, place) else {
            return;
        };
        self.out.events.push(Event::Path(PathClaim {
            host: host.clone(),
            path: normalised,
            kind,
            backend: Some(backend),
            route: RouteSettings {
                ssl_redirect: self.annotations.ssl_redirect,
                options: None,
            },
        }));
    }

    fn resolve(&mut self, backend: &IngressBackend, place: Place<'_>) -> Option<Arc<Resolved>> {
        if let Some(service) = backend.service.as_ref().filter(|service| !service.name.is_empty()) {
            let named = (self.namespace, &*service.name);
            if !self
                .out
                .services
                .iter()
                .any(|(ns, n)| (ns.as_str(), n.as_str()) == named)
            {
                self.out.services.push((named.0.to_string(), named.1.to_string()));
            }
        }
        match self
            .backends
            .resolve(self.namespace, backend, self.annotations.backend_protocol)
        {
            Ok(resolved) => Some(resolved),
            Err(error) => {
                self.report(error.reason(), format!("{error} for {place}"));
                None
            }
        }
    }

    fn report(&mut self, reason: Reason, message: String) {
        let diagnostic = Diagnostic::new(self.namespace, self.name, reason, message);
        self.out.events.push(Event::Report(diagnostic));
    }
}

/// Names the Ingress holding a slot, as seen from `source`.
fn holder_name(holder: &str, source: &str) -> String {
    if holder == source {
        "an earlier path of this ingress".to_string()
    } else {
        format!("ingress {holder:?}")
    }
}

// === impl Place ===

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Path {
                host: HostMatch::Any,
                path,
            } => write!(f, "path {path:?} on any host"),
            Place::Path { host, path } => write!(f, "path {path:?} on host \"{host}\""),
            Place::DefaultBackend => f.write_str("the default backend"),
        }
    }
}
