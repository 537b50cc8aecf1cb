//! The qcloud profile: shadowed TKE Ingresses compiled the way TKE's CLB serves them, so an
//! in-cluster caller whose DNS now points at shunt gets the CLB's answer, or keeps the CLB.
//!
//! ```text
//! qcloud Ingresses ─annotations─▶ rules::split (listener per rule, redirects)
//!       │                              └─▶ CLB paths and hosts ─claim─▶ table (exclusive hosts)
//!       └─ certificates (--shadow-tls, shunt.dev/tls-secret, spec.tls) ─▶ TlsBuilder
//! per host: reasons ─▶ HostVerdict { identical | refused } ─▶ /shadow, DNS, diagnostics
//! ```
//!
//! Unlike Ingress-spec semantics, each qcloud Ingress is its own load balancer: its rules never
//! mix with another's, a host two of them claim is ambiguous, and a known host answers 404 for
//! paths it lacks instead of falling through.

mod annotations;
mod certificates;
mod rules;
mod verdicts;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::networking::v1::Ingress;
use shunt_proxy::routes::spec::{HostMatch, Listeners, PathKind, RedirectSpec, RouteOptions};

use self::rules::{Action, ClbRule};
pub use self::verdicts::{ASSUMED, HostVerdict, Verdict, dns_refusals, document};
use super::{Diagnostic, Reason, ingress::Sink, namespace_name, paths, tls::TlsBuilder};

/// The header the CLB sets to the client's protocol (documented for backends).
pub const CLIENT_PROTO_HEADER: &str = "X-Client-Proto";

/// What the profile needs beyond the Ingresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowOptions {
    /// `auto-rewrite` without a code: not documented precisely, 302 per a secondary source.
    pub default_rewrite_code: u16,
    /// `--shadow-tls HOST=NAMESPACE/NAME`: a `kubernetes.io/tls` Secret per host, as written.
    pub tls: BTreeMap<String, (String, String)>,
}

impl Default for ShadowOptions {
    fn default() -> Self {
        ShadowOptions {
            default_rewrite_code: 302,
            tls: BTreeMap::new(),
        }
    }
}

/// One qcloud Ingress on its way through.
struct Lb<'i> {
    ingress: &'i Ingress,
    namespace: &'i str,
    name: &'i str,
    source: String,
    /// The load balancer: its group's `existLbId`, else the Ingress itself.
    key: String,
    rules: Vec<ClbRule>,
    /// Reasons every host of this Ingress is refused.
    problems: Vec<String>,
    tls_secret: Option<String>,
}

/// Compiles `ingresses` (in precedence order) into `sink` and `certificates`; returns a verdict
/// per named host, sorted by host.
pub fn compile(
    ingresses: &[&Ingress],
    sink: &mut Sink<'_>,
    certificates: &mut TlsBuilder<'_>,
    options: &ShadowOptions,
) -> Vec<HostVerdict> {
    let lbs: Vec<Lb<'_>> = ingresses
        .iter()
        .map(|ingress| prepare(ingress, options, &mut sink.diagnostics))
        .collect();
    let mut verdicts: BTreeMap<String, HostVerdict> = BTreeMap::new();
    let mut keys: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for lb in &lbs {
        for rule in lb.rules.iter().filter(|rule| !rule.host.is_empty()) {
            let Ok(matched) = host_match(&rule.host) else { continue };
            let verdict = verdicts
                .entry(rule.host.clone())
                .or_insert_with(|| HostVerdict::new(rule.host.clone(), matched));
            verdict.ingresses.push(lb.source.clone());
            verdict.reasons.extend(lb.problems.iter().cloned());
            for listener in listener_names(rule.listeners) {
                if !verdict.listeners.contains(&listener) {
                    verdict.listeners.push(listener);
                }
            }
            keys.entry(rule.host.clone()).or_default().insert(&lb.key);
        }
    }
    for (host, lb_keys) in &keys {
        if lb_keys.len() > 1
            && let Some(verdict) = verdicts.get_mut(host)
        {
            let mut sources = verdict.ingresses.clone();
            sources.dedup();
            let reason = format!(
                "AmbiguousLoadBalancer: {} each have a load balancer for it",
                sources.join(", ")
            );
            verdict.reasons.push(reason);
        }
    }

    let qcloud_sources: BTreeSet<&str> = lbs.iter().map(|lb| lb.source.as_str()).collect();
    for lb in &lbs {
        route(lb, sink, &qcloud_sources, &mut verdicts);
    }
    for lb in &lbs {
        certificates::bind(lb, certificates, options, &mut verdicts);
    }

    let mut verdicts: Vec<HostVerdict> = verdicts.into_values().collect();
    for verdict in &mut verdicts {
        verdict.listeners.sort();
        verdict.settle();
        if verdict.verdict == Verdict::Refused {
            for source in &verdict.ingresses {
                let (namespace, name) = source.split_once('/').unwrap_or(("", source));
                let message = format!(
                    "host \"{}\" keeps resolving to the load balancer: {}",
                    verdict.host,
                    verdict.reasons.join("; ")
                );
                sink.diagnostics
                    .push(Diagnostic::new(namespace, name, Reason::ShadowRefused, message));
            }
        }
    }
    verdicts
}

fn prepare<'i>(ingress: &'i Ingress, options: &ShadowOptions, diagnostics: &mut Vec<Diagnostic>) -> Lb<'i> {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let parsed = annotations::parse(ingress);
    let (rules, mut problems) = rules::split(ingress, &parsed, options.default_rewrite_code);
    for (key, error) in &parsed.invalid {
        diagnostics.push(Diagnostic::new(
            namespace,
            name,
            Reason::InvalidAnnotation,
            format!("annotation {key}: {error}"),
        ));
        problems.push(format!("InvalidAnnotation: {key}"));
    }
    for key in &parsed.unsupported {
        problems.push(format!("UnsupportedAnnotation: {key}"));
    }
    for (protocol, port) in parsed.listen_ports.iter().flatten() {
        if !matches!((protocol.as_str(), port), ("HTTP", 80) | ("HTTPS", 443)) {
            problems.push(format!("ListenPortNotServed: {protocol}:{port}"));
        }
    }
    Lb {
        ingress,
        namespace,
        name,
        source: format!("{namespace}/{name}"),
        key: parsed
            .group
            .map_or_else(|| format!("ingress {namespace}/{name}"), |id| format!("lb {id}")),
        rules,
        problems,
        tls_secret: parsed.tls_secret,
    }
}

/// Claims the Ingress's rules. A host without rules on one listener gets the Ingress's
/// default-domain rules there (the CLB's listener does not know it), or none: 404.
fn route(
    lb: &Lb<'_>,
    sink: &mut Sink<'_>,
    qcloud_sources: &BTreeSet<&str>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    let mut rules: Vec<ClbRule> = lb.rules.clone();
    let hosts: BTreeSet<&str> = lb
        .rules
        .iter()
        .map(|r| r.host.as_str())
        .filter(|h| !h.is_empty())
        .collect();
    for host in &hosts {
        for listener in [Listeners::Plain, Listeners::Tls] {
            let tls = listener == Listeners::Tls;
            let known = lb.rules.iter().any(|r| r.host == *host && r.listeners.serves(tls));
            if known {
                continue;
            }
            for fallback in lb.rules.iter().filter(|r| r.host.is_empty() && r.listeners.serves(tls)) {
                rules.push(ClbRule {
                    host: host.to_string(),
                    listeners: listener,
                    ..fallback.clone()
                });
            }
        }
    }
    let report = |sink: &mut Sink<'_>, reason, message: String| {
        sink.diagnostics
            .push(Diagnostic::new(lb.namespace, lb.name, reason, message));
    };
    for rule in &rules {
        let host = match host_match(&rule.host) {
            Ok(host) => host,
            Err(error) => {
                report(
                    sink,
                    Reason::InvalidHost,
                    format!("invalid host {:?}, rule skipped: {error}", rule.host),
                );
                continue;
            }
        };
        let (kind, path) = match clb_path(rule.path.as_deref(), &rule.path_type) {
            Ok(parsed) => parsed,
            Err(error) => {
                report(
                    sink,
                    Reason::InvalidPath,
                    format!("invalid path {:?} on host \"{host}\": {error}", rule.path),
                );
                continue;
            }
        };
        let (backend, redirect) = match &rule.action {
            Action::Forward(backend) => match sink.backends.resolve(lb.namespace, backend, None) {
                Ok(resolved) => (Some(resolved), None),
                Err(error) => {
                    report(
                        sink,
                        error.reason(),
                        format!("{error} for path {path:?} on host \"{host}\""),
                    );
                    continue;
                }
            },
            Action::Redirect(redirect) => (
                None,
                Some(RedirectSpec {
                    code: redirect.code,
                    scheme: Some(redirect.scheme),
                    host: redirect.host.clone(),
                    port: redirect.port,
                    path: redirect.path.clone(),
                }),
            ),
        };
        let options = RouteOptions {
            listeners: rule.listeners,
            redirect,
            client_protocol_header: Some(CLIENT_PROTO_HEADER.to_string()),
        };
        let claimed = sink
            .table
            .claim_route(&host, &path, kind, backend.as_deref(), &lb.source, false, options);
        match claimed {
            Ok(()) => {
                if let Some(resolved) = &backend
                    && resolved.spec.endpoints.is_empty()
                {
                    report(
                        sink,
                        Reason::NoEndpoints,
                        format!(
                            "backend {:?} has no ready endpoints for path {path:?} on host \"{host}\"",
                            resolved.id
                        ),
                    );
                }
            }
            Err(holder) if holder == lb.source => {}
            Err(holder) => {
                report(
                    sink,
                    Reason::Conflict,
                    format!("path {path:?} on host \"{host}\" is already routed by ingress {holder:?}"),
                );
                // Another qcloud Ingress: ambiguous already, or the same load balancer (a group).
                if !qcloud_sources.contains(holder.as_str())
                    && let Some(verdict) = verdicts.get_mut(&rule.host)
                {
                    verdict
                        .reasons
                        .push(format!("Conflict: path {path} is routed by {holder}"));
                }
            }
        }
        if host != HostMatch::Any {
            sink.table.set_exclusive(&host);
        }
    }
}

/// A CLB domain: `*.example.com` matches any number of labels.
fn host_match(raw: &str) -> Result<HostMatch, paths::HostError> {
    Ok(match paths::parse_host(raw)? {
        HostMatch::Wildcard(suffix) => HostMatch::DeepWildcard(suffix),
        other => other,
    })
}

/// A CLB URL rule: `Exact` is nginx's `=`, anything else a character prefix kept verbatim.
fn clb_path(path: Option<&str>, path_type: &str) -> Result<(PathKind, String), paths::PathError> {
    let path = path.filter(|p| !p.is_empty()).unwrap_or("/");
    // Validated as an exact path would be: absolute, no characters a request cannot carry.
    let (_, path) = paths::parse_path(Some(path), "Exact")?;
    let kind = match path_type {
        "Exact" => PathKind::Exact,
        "Prefix" | "ImplementationSpecific" | "" => PathKind::CharPrefix,
        other => return Err(paths::PathError::UnknownType(other.to_string())),
    };
    Ok((kind, path))
}

fn listener_names(listeners: Listeners) -> Vec<&'static str> {
    match listeners {
        Listeners::Both => vec!["http", "https"],
        Listeners::Plain => vec!["http"],
        Listeners::Tls => vec!["https"],
    }
}
