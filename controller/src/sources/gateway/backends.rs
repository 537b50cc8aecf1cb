//! A rule's `backendRefs` to the backend it forwards to, or a weighted [`BackendSplit`]; a
//! reference that does not resolve keeps its share, answered with 500 (the spec), and gives the
//! route's parents `ResolvedRefs=False` with the first reason found.
//!
//! ```text
//! backendRef ─ group/kind not core Service ─▶ InvalidKind
//!            ─ other namespace, no ReferenceGrant ─▶ RefNotPermitted
//!            ─ Service or port missing ─▶ BackendNotFound
//!            ─▶ Resolved (compile/backend.rs, as for an Ingress)
//! one resolved, weighted, without filters ─▶ backend; else ─▶ split (a choice per ref)
//! ```

use std::sync::Arc;

use crate::objects::{IngressBackend, IngressServiceBackend, ServiceBackendPort};
use shunt_spec::{BackendSplit, MAX_CHOICES, MAX_WEIGHT_TOTAL, SplitChoice, UpstreamProtocol};

use super::{
    filters,
    grants::{self, Grants},
    objects::{GROUP, HTTPBackendRef},
};
use crate::compile::{Backends, Resolved};

/// Where a rule's requests go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleBackends {
    /// The one backend, when there is no split.
    pub backend: Option<Arc<Resolved>>,
    pub split: Option<BackendSplit>,
    /// Every resolved backend, for the table's `backends`.
    pub resolved: Vec<Arc<Resolved>>,
    /// Why some reference did not resolve (a `ResolvedRefs` reason).
    pub unresolved: Option<&'static str>,
}

/// The kind of route whose references are resolved: the kind a ReferenceGrant must name, and
/// how its backends are spoken to (`None`: as the Service port says).
#[derive(Clone, Copy, Debug)]
pub struct Referrer {
    pub kind: &'static str,
    pub protocol: Option<UpstreamProtocol>,
}

pub const HTTP_ROUTE: Referrer = Referrer {
    kind: "HTTPRoute",
    protocol: None,
};

/// Resolves `refs` of a route in `namespace`; an error is what shunt cannot serve.
pub fn resolve(
    (referrer, namespace): (Referrer, &str),
    refs: &[HTTPBackendRef],
    grants: &Grants<'_>,
    backends: &mut Backends<'_>,
) -> Result<RuleBackends, String> {
    if refs.len() > MAX_CHOICES {
        return Err(format!("more than {MAX_CHOICES} backendRefs in a rule"));
    }
    let mut rule = RuleBackends::default();
    let mut choices = Vec::with_capacity(refs.len());
    let mut total = 0u64;
    for reference in refs {
        let weight = match reference.weight.unwrap_or(1) {
            weight @ 0..=1_000_000 => weight as u32,
            other => return Err(format!("backendRef weight {other} is out of range")),
        };
        total += u64::from(weight);
        let (request_headers, response_headers) = filters::parse_backend(&reference.filters)?;
        let backend = match one((referrer, namespace), reference, grants, backends) {
            Ok(resolved) => {
                rule.resolved.push(resolved.clone());
                Some(resolved)
            }
            Err(reason) => {
                rule.unresolved = rule.unresolved.or(Some(reason));
                None
            }
        };
        choices.push(SplitChoice {
            backend: backend.map(|resolved| resolved.id.clone()),
            weight,
            request_headers,
            response_headers,
        });
    }
    if total > u64::from(MAX_WEIGHT_TOTAL) {
        return Err(format!("backendRef weights add up to more than {MAX_WEIGHT_TOTAL}"));
    }
    let plain = match choices.as_slice() {
        [only] => only.weight > 0 && only.request_headers.is_none() && only.response_headers.is_none(),
        _ => false,
    };
    match (plain, rule.resolved.first()) {
        (true, Some(resolved)) => rule.backend = Some(resolved.clone()),
        // No reference at all forwards nowhere: one choice without a backend answers 500.
        _ if choices.is_empty() => {
            rule.split = Some(BackendSplit {
                choices: vec![no_backend()],
            })
        }
        _ => rule.split = Some(BackendSplit { choices }),
    }
    Ok(rule)
}

/// A choice that answers 500.
pub fn no_backend() -> SplitChoice {
    SplitChoice {
        backend: None,
        weight: 1,
        request_headers: None,
        response_headers: None,
    }
}

/// One reference, resolved; the error is its `ResolvedRefs` reason.
pub fn one(
    (referrer, namespace): (Referrer, &str),
    reference: &HTTPBackendRef,
    grants: &Grants<'_>,
    backends: &mut Backends<'_>,
) -> Result<Arc<Resolved>, &'static str> {
    let group = reference.group.as_deref().unwrap_or_default();
    if !group.is_empty() || reference.kind.as_deref().unwrap_or("Service") != "Service" {
        return Err("InvalidKind");
    }
    let target = reference.namespace.as_deref().unwrap_or(namespace);
    let from = grants::From {
        group: GROUP,
        kind: referrer.kind,
        namespace,
    };
    let to = grants::To {
        group: "",
        kind: "Service",
        namespace: target,
        name: &reference.name,
    };
    if !grants.permits(from, to) {
        return Err("RefNotPermitted");
    }
    let port = reference.port.ok_or("BackendNotFound")?;
    let backend = IngressBackend {
        service: Some(IngressServiceBackend {
            name: reference.name.as_str().into(),
            port: Some(ServiceBackendPort {
                number: Some(port),
                name: None,
            }),
        }),
        resource: None,
    };
    (backends.resolve(target, &backend, referrer.protocol)).map_err(|_| "BackendNotFound")
}
