//! One Ingress into the table: its default backend, then each rule and path in order. Every
//! problem becomes a [`Diagnostic`] and skips only the rule or path it concerns.

use std::{collections::BTreeSet, fmt, rc::Rc};

use k8s_openapi::api::networking::v1::{HTTPIngressPath, Ingress, IngressBackend, IngressRule};
use shunt_proxy::routes::spec::{BackendId, HostMatch, PathKind};

use super::{
    Diagnostic, Reason,
    annotations::{self, IngressAnnotations},
    backend::{Backends, Resolved},
    namespace_name, paths,
    table::TableBuilder,
};

/// What every Ingress of one compile writes into.
pub struct Sink<'a> {
    pub backends: Backends<'a>,
    pub table: TableBuilder,
    pub diagnostics: Vec<Diagnostic>,
}

/// Where in an Ingress a problem is, for messages.
#[derive(Clone, Copy)]
enum Place<'p> {
    Path { host: &'p HostMatch, path: &'p str },
    DefaultBackend,
}

/// One Ingress being compiled.
struct Walk<'s, 'a> {
    sink: &'s mut Sink<'a>,
    namespace: &'s str,
    name: &'s str,
    /// `namespace/name`, as `PathSpec::source` carries it.
    source: String,
    /// Backends already reported as `NoEndpoints` for this Ingress.
    empty_reported: BTreeSet<BackendId>,
    annotations: IngressAnnotations,
}

pub fn compile_ingress(ingress: &Ingress, sink: &mut Sink<'_>) {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let Some(spec) = &ingress.spec else { return };
    let (parsed, bad) = annotations::parse(ingress);
    let mut walk = Walk {
        sink,
        namespace,
        name,
        source: format!("{namespace}/{name}"),
        empty_reported: BTreeSet::new(),
        annotations: parsed,
    };
    for bad in bad {
        let message = format!(
            "annotation {} is {:?}, expected {}; ignored",
            bad.key, bad.value, bad.expected
        );
        walk.report(Reason::InvalidAnnotation, message);
    }
    if let Some(backend) = &spec.default_backend {
        walk.default_backend(backend);
    }
    for rule in spec.rules.iter().flatten() {
        walk.rule(rule);
    }
}

// === impl Walk ===

impl Walk<'_, '_> {
    fn default_backend(&mut self, backend: &IngressBackend) {
        let Some(resolved) = self.resolve(backend, Place::DefaultBackend) else {
            return;
        };
        match self.sink.table.claim_default(&resolved, &self.source) {
            Ok(()) => self.check_endpoints(&resolved, Place::DefaultBackend),
            Err(holder) => {
                let message = format!(
                    "default backend is already set by {}",
                    holder_name(&holder, &self.source)
                );
                self.report(Reason::Conflict, message);
            }
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
        let Some(resolved) = self.resolve(&path.backend, place) else {
            return;
        };
        match self.sink.table.claim_path(
            host,
            &normalised,
            kind,
            &resolved,
            &self.source,
            self.annotations.ssl_redirect,
        ) {
            Ok(()) => self.check_endpoints(&resolved, place),
            Err(holder) => {
                let kind = match kind {
                    PathKind::Exact => "exact",
                    PathKind::Prefix => "prefix",
                    PathKind::CharPrefix => "character prefix",
                };
                let message = format!(
                    "{kind} {place} is already routed by {}",
                    holder_name(&holder, &self.source)
                );
                self.report(Reason::Conflict, message);
            }
        }
    }

    fn resolve(&mut self, backend: &IngressBackend, place: Place<'_>) -> Option<Rc<Resolved>> {
        match self
            .sink
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

    /// Reports a backend without endpoints once per Ingress, at its first use.
    fn check_endpoints(&mut self, resolved: &Resolved, place: Place<'_>) {
        if resolved.spec.endpoints.is_empty() && self.empty_reported.insert(resolved.id.clone()) {
            self.report(
                Reason::NoEndpoints,
                format!("backend {:?} has no ready endpoints for {place}", resolved.id),
            );
        }
    }

    fn report(&mut self, reason: Reason, message: String) {
        self.sink
            .diagnostics
            .push(Diagnostic::new(self.namespace, self.name, reason, message));
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
