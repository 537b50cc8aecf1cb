//! The nginx profile: Ingresses of an ingress-nginx class compiled the way ingress-nginx serves
//! them, so an in-cluster caller whose DNS now points at shunt gets nginx's answer, or keeps
//! the load balancer with the reason.
//!
//! ```text
//! nginx Ingresses ─annotations::parse─▶ reproduced settings + refused keys
//!       ├─ paths (Prefix element-wise via `/p/` + `= /p`, Exact, longest wins) ─claim─▶ table
//!       └─ spec.tls ─▶ TlsBuilder; hosts with a certificate redirect plain HTTP (ssl-redirect)
//! per host: refused keys + standing differences ─▶ HostVerdict { identical | refused }
//! ```
//!
//! Unlike qcloud, ingress-nginx merges every Ingress naming a host into one nginx `server`, as
//! the Ingress spec does: claims go into the table like shunt's own, oldest Ingress first
//! (ingress-nginx sorts by creation time too, `internal/ingress/controller/store`).

pub mod annotations;
pub mod config;
mod paths;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::networking::v1::{HTTPIngressPath, Ingress};
use shunt_proxy::routes::spec::HostMatch;

use self::{annotations::NginxAnnotations, config::NginxConfig};
use super::{HostVerdict, verdict};
use crate::compile::{Diagnostic, PathClaim, Reason, RouteSettings, Sink, TlsBuilder, namespace_name};

/// The profile's name in `--shadow-class NAME=nginx` and the `/shadow` document.
pub const PROFILE: &str = "nginx";

/// What shunt assumes of ingress-nginx (its defaults, no ConfigMap keys set); `/shadow` lists it.
pub const ASSUMED: [&str; 6] = [
    "the controller's ConfigMap sets no keys: ingress-nginx's defaults (ssl-redirect true, http-redirect-code 308, allow-snippet-annotations false)",
    "pathType ImplementationSpecific (and a missing pathType) is Prefix, as internal/k8s/main.go converts it",
    "a Prefix path '/p' is nginx's '= /p' plus '/p/'; a Prefix path ending in '/' is that character prefix alone",
    "the oldest Ingress (creationTimestamp) holds a path two of them name",
    "a host has a certificate when a spec.tls entry of an nginx Ingress names it exactly",
    "nginx.ingress.kubernetes.io/* keys that change only buffering, logging, tracing or endpoint choice have no effect on the answer",
];

/// Answers shunt's proxy gives every nginx host differently today: each host is refused with
/// these until the proxy reproduces them, so no caller is moved to a different answer.
pub const NOT_REPRODUCED: [&str; 2] = [
    "NotReproduced: request headers the pod sees (nginx sends X-Scheme, X-Forwarded-Scheme and X-Original-Forwarded-For, no Forwarded)",
    "NotReproduced: proxy-body-size default 1m (nginx answers 413 above it)",
];

/// What hosts with a certificate differ in besides [`NOT_REPRODUCED`].
pub const NOT_REPRODUCED_TLS: [&str; 2] = [
    "NotReproduced: HSTS on HTTPS answers (hsts true, max-age 31536000, includeSubDomains)",
    "NotReproduced: ssl-redirect Location drops one trailing '/' (lua_ingress.lua)",
];

/// Which routes redirect plain HTTP to HTTPS (lua_ingress.lua, `redirect_to_https`).
struct Redirects<'c> {
    /// Hosts a `spec.tls` entry names.
    with_certificate: BTreeSet<String>,
    /// Path prefixes that never redirect (`no-tls-redirect-locations`).
    exempt: &'c [String],
}

/// One nginx Ingress on its way through.
struct Nginx<'i> {
    ingress: &'i Ingress,
    namespace: &'i str,
    name: &'i str,
    source: String,
    annotations: NginxAnnotations,
    /// Reasons every host of this Ingress is refused.
    problems: Vec<String>,
}

/// Compiles `ingresses` (in precedence order) into `sink` and `certificates`; returns a verdict
/// per named host, sorted by host.
pub fn compile(
    ingresses: &[&Ingress],
    sink: &mut Sink<'_>,
    certificates: &mut TlsBuilder<'_>,
    config: &NginxConfig,
) -> Vec<HostVerdict> {
    let nginxes: Vec<Nginx<'_>> = ingresses.iter().map(|ingress| prepare(ingress, config)).collect();
    let redirects = Redirects {
        with_certificate: certificate_hosts(ingresses),
        exempt: &config.no_tls_redirect,
    };
    let mut verdicts = named(&nginxes, &redirects.with_certificate);
    let sources: BTreeSet<&str> = nginxes.iter().map(|n| n.source.as_str()).collect();
    for nginx in &nginxes {
        claim(nginx, sink, &redirects, &sources, &mut verdicts);
        certificates.ingress(nginx.ingress, &mut sink.diagnostics);
    }
    verdict::settle_all(verdicts, &mut sink.diagnostics)
}

fn prepare<'i>(ingress: &'i Ingress, config: &NginxConfig) -> Nginx<'i> {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let mut annotations = annotations::parse(ingress);
    annotations.ssl_redirect = annotations.ssl_redirect.or(Some(config.ssl_redirect));
    let mut problems = annotations.refusals.clone();
    problems.extend(config.refusals.iter().cloned());
    // ingress-nginx gives the Ingress's hosts this backend for paths none of its rules name
    // (internal/ingress/controller/controller.go, `getBackendServers`); not reproduced.
    if ingress.spec.as_ref().is_some_and(|spec| spec.default_backend.is_some()) {
        problems.push("UnsupportedField: spec.defaultBackend".to_string());
    }
    Nginx {
        ingress,
        namespace,
        name,
        source: format!("{namespace}/{name}"),
        annotations,
        problems,
    }
}

/// Hosts a `spec.tls` entry of an nginx Ingress names, lowercase.
fn certificate_hosts(ingresses: &[&Ingress]) -> BTreeSet<String> {
    ingresses
        .iter()
        .filter_map(|ingress| ingress.spec.as_ref()?.tls.as_ref())
        .flatten()
        .flat_map(|tls| tls.hosts.iter().flatten())
        .map(|host| host.trim_end_matches('.').to_ascii_lowercase())
        .collect()
}

/// A verdict for each host a rule names, with the reasons its Ingresses give.
fn named(nginxes: &[Nginx<'_>], with_certificate: &BTreeSet<String>) -> BTreeMap<String, HostVerdict> {
    let mut verdicts: BTreeMap<String, HostVerdict> = BTreeMap::new();
    for nginx in nginxes {
        for (host, matched) in rule_hosts(nginx.ingress) {
            let verdict = verdicts.entry(host.clone()).or_insert_with(|| {
                let mut verdict = HostVerdict::new(host.clone(), matched);
                verdict.reasons.extend(NOT_REPRODUCED.iter().map(|r| r.to_string()));
                verdict.listeners = vec!["http"];
                if with_certificate.contains(&host) {
                    verdict.reasons.extend(NOT_REPRODUCED_TLS.iter().map(|r| r.to_string()));
                    verdict.listeners.push("https");
                }
                verdict
            });
            verdict.ingresses.push(nginx.source.clone());
            verdict.reasons.extend(nginx.problems.iter().cloned());
        }
    }
    verdicts
}

/// The named hosts of an Ingress's rules that parse, lowercase.
fn rule_hosts(ingress: &Ingress) -> Vec<(String, HostMatch)> {
    let rules = ingress.spec.as_ref().and_then(|spec| spec.rules.as_ref());
    rules
        .into_iter()
        .flatten()
        .filter_map(|rule| {
            let raw = rule.host.as_deref().filter(|h| !h.is_empty())?;
            let matched = crate::compile::parse_host(raw).ok()?;
            Some((raw.trim_end_matches('.').to_ascii_lowercase(), matched))
        })
        .collect()
}

/// Claims each path of the Ingress; a path another class holds refuses the host.
fn claim(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    redirects: &Redirects<'_>,
    sources: &BTreeSet<&str>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    let Some(rules) = nginx.ingress.spec.as_ref().and_then(|spec| spec.rules.as_ref()) else {
        return;
    };
    for rule in rules {
        let raw = rule.host.as_deref().unwrap_or_default();
        let host = match crate::compile::parse_host(raw) {
            Ok(host) => host,
            Err(error) => {
                report(
                    nginx,
                    sink,
                    Reason::InvalidHost,
                    format!("invalid host {raw:?}, rule skipped: {error}"),
                );
                continue;
            }
        };
        let name = raw.trim_end_matches('.').to_ascii_lowercase();
        let ssl_redirect = nginx.annotations.force_ssl_redirect
            || (nginx.annotations.ssl_redirect.unwrap_or(true) && redirects.with_certificate.contains(&name));
        for path in rule.http.iter().flat_map(|http| &http.paths) {
            let Some(mut claim) = path_claim(nginx, sink, &host, path, ssl_redirect) else {
                continue;
            };
            claim.route.ssl_redirect &= !redirects.exempt.iter().any(|p| claim.path.starts_with(p.as_str()));
            let Err(holder) = sink.table.claim(&claim, &nginx.source) else {
                report_no_endpoints(nginx, &claim, sink);
                continue;
            };
            if holder == nginx.source {
                continue;
            }
            let message = format!(
                "path {:?} on host \"{host}\" is already routed by ingress {holder:?}",
                claim.path
            );
            report(nginx, sink, Reason::Conflict, message);
            // Another class's Ingress: nginx would not see it, so the answers differ.
            if !sources.contains(holder.as_str())
                && let Some(verdict) = verdicts.get_mut(&name)
            {
                verdict
                    .reasons
                    .push(format!("Conflict: path {} is routed by {holder}", claim.path));
            }
        }
    }
}

/// The claim a path makes; `None`, with a diagnostic, when its path or backend is unusable.
fn path_claim(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    host: &HostMatch,
    path: &HTTPIngressPath,
    ssl_redirect: bool,
) -> Option<PathClaim> {
    let (kind, normalised) = match paths::nginx_path(path.path.as_deref(), &path.path_type) {
        Ok(parsed) => parsed,
        Err(error) => {
            let message = format!("invalid path {:?} on host \"{host}\": {error}", path.path);
            report(nginx, sink, Reason::InvalidPath, message);
            return None;
        }
    };
    let protocol = nginx.annotations.backend_protocol;
    let backend = match sink.backends.resolve(nginx.namespace, &path.backend, protocol) {
        Ok(resolved) => resolved,
        Err(error) => {
            let message = format!("{error} for path {normalised:?} on host \"{host}\"");
            report(nginx, sink, error.reason(), message);
            return None;
        }
    };
    Some(PathClaim {
        host: host.clone(),
        path: normalised,
        kind,
        backend: Some(backend),
        route: RouteSettings {
            ssl_redirect,
            options: None,
        },
    })
}

fn report_no_endpoints(nginx: &Nginx<'_>, claim: &PathClaim, sink: &mut Sink<'_>) {
    if let Some(resolved) = claim.backend.as_deref().filter(|b| b.spec.endpoints.is_empty()) {
        let (id, path, host) = (&resolved.id, &claim.path, &claim.host);
        let message = format!("backend {id:?} has no ready endpoints for path {path:?} on host \"{host}\"");
        report(nginx, sink, Reason::NoEndpoints, message);
    }
}

fn report(nginx: &Nginx<'_>, sink: &mut Sink<'_>, reason: Reason, message: String) {
    sink.diagnostics
        .push(Diagnostic::new(nginx.namespace, nginx.name, reason, message));
}
