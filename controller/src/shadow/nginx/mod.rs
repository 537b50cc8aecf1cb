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
mod app_root;
pub mod config;
mod cors;
mod paths;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::networking::v1::{HTTPIngressPath, Ingress};
use shunt_proxy::routes::spec::{Forwarding, HostMatch, HttpsRedirect, RedirectSpec, RouteOptions};

use self::{
    annotations::NginxAnnotations,
    config::{NginxConfig, SnippetPolicy},
};
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
    let nginxes: Vec<Nginx<'_>> = ingresses
        .iter()
        .filter_map(|ingress| prepare(ingress, config, &mut sink.diagnostics))
        .collect();
    let redirects = Redirects {
        with_certificate: certificate_hosts(&nginxes),
        exempt: &config.no_tls_redirect,
    };
    let mut verdicts = named(&nginxes, &redirects.with_certificate);
    let sources: BTreeSet<&str> = nginxes.iter().map(|n| n.source.as_str()).collect();
    // `app-root` is a server-level `if`: it answers `/` before any location of the host.
    for nginx in &nginxes {
        app_root::claim(nginx, sink, config, &mut verdicts);
    }
    for nginx in &nginxes {
        claim(nginx, sink, &redirects, config, &sources, &mut verdicts);
        certificates.ingress(nginx.ingress, &mut sink.diagnostics);
    }
    refuse_without_certificate(&redirects.with_certificate, certificates, &mut verdicts);
    verdict::settle_all(verdicts, &mut sink.diagnostics)
}

/// The Ingress as the profile reads it; `None`, with a diagnostic, when ingress-nginx would
/// serve none of it.
fn prepare<'i>(ingress: &'i Ingress, config: &NginxConfig, diagnostics: &mut Vec<Diagnostic>) -> Option<Nginx<'i>> {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let mut annotations = annotations::parse(ingress);
    annotations.ssl_redirect = annotations.ssl_redirect.or(Some(config.ssl_redirect));
    let mut problems = annotations.refusals.clone();
    problems.extend(config.refusals.iter().cloned());
    if let Some(snippet) = annotations.snippets.first() {
        match config.snippets {
            SnippetPolicy::RejectIngress => {
                let message = format!(
                    "{snippet} is a snippet (Critical risk), above the ConfigMap's annotations-risk-level: ingress-nginx serves none of this Ingress, and neither does shunt"
                );
                diagnostics.push(Diagnostic::new(namespace, name, Reason::InvalidAnnotation, message));
                return None;
            }
            SnippetPolicy::Drop => {}
            SnippetPolicy::Run => {
                problems.extend(
                    annotations
                        .snippets
                        .iter()
                        .map(|key| format!("UnsupportedAnnotation: {key}")),
                );
            }
        }
    }
    // ingress-nginx gives the Ingress's hosts this backend for paths none of its rules name
    // (internal/ingress/controller/controller.go, `getBackendServers`); not reproduced.
    if ingress.spec.as_ref().is_some_and(|spec| spec.default_backend.is_some()) {
        problems.push("UnsupportedField: spec.defaultBackend".to_string());
    }
    Some(Nginx {
        ingress,
        namespace,
        name,
        source: format!("{namespace}/{name}"),
        annotations,
        problems,
    })
}

/// Hosts a `spec.tls` entry of an nginx Ingress names, lowercase.
fn certificate_hosts(nginxes: &[Nginx<'_>]) -> BTreeSet<String> {
    nginxes
        .iter()
        .filter_map(|nginx| nginx.ingress.spec.as_ref()?.tls.as_ref())
        .flatten()
        .flat_map(|tls| tls.hosts.iter().flatten())
        .map(|host| host.trim_end_matches('.').to_ascii_lowercase())
        .collect()
}

/// A host a `spec.tls` entry names whose Secret shunt cannot serve: ingress-nginx would answer
/// with its default certificate and, having no certificate for the host, not redirect to HTTPS
/// (lua_ingress.lua, `certificate_configured_for_current_request`); shunt's answer would differ.
fn refuse_without_certificate(
    with_certificate: &BTreeSet<String>,
    certificates: &TlsBuilder<'_>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    for host in with_certificate {
        let Some(verdict) = verdicts.get_mut(host) else {
            continue;
        };
        if !certificates.serves(&verdict.matched) {
            verdict.reasons.push(format!(
                "CertificateUnavailable: no usable Secret for \"{host}\" (ingress-nginx would serve its default certificate and not redirect)"
            ));
        }
    }
}

/// A verdict for each host a rule names, with the reasons its Ingresses give.
fn named(nginxes: &[Nginx<'_>], with_certificate: &BTreeSet<String>) -> BTreeMap<String, HostVerdict> {
    let mut verdicts: BTreeMap<String, HostVerdict> = BTreeMap::new();
    for nginx in nginxes {
        for (host, matched) in rule_hosts(nginx.ingress) {
            let verdict = verdicts.entry(host.clone()).or_insert_with(|| {
                let mut verdict = HostVerdict::new(host.clone(), matched);
                verdict.listeners = vec!["http"];
                if with_certificate.contains(&host) {
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
    config: &NginxConfig,
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
            let Some(mut claim) = path_claim(nginx, sink, &host, path, config, ssl_redirect) else {
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
    config: &NginxConfig,
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
    let options = route_options(&nginx.annotations, config);
    // A `return` in the location answers before the HTTPS redirect (nginx's rewrite module runs
    // ahead of lua_ingress.lua's rewrite handler) and never reaches the backend.
    if options.redirect.is_some() {
        return Some(PathClaim {
            host: host.clone(),
            path: normalised,
            kind,
            backend: None,
            route: RouteSettings::from(options),
        });
    }
    let protocol = nginx.annotations.backend_protocol;
    let backend = match sink.backends.resolve(nginx.namespace, &path.backend, protocol) {
        Ok(resolved) => resolved,
        Err(error) => {
            let message = format!("{error} for path {normalised:?} on host \"{host}\"");
            report(nginx, sink, error.reason(), message);
            return None;
        }
    };
    let mut route = RouteSettings::from(options);
    route.ssl_redirect = ssl_redirect;
    Some(PathClaim {
        host: host.clone(),
        path: normalised,
        kind,
        backend: Some(backend),
        route,
    })
}

/// What every route of an nginx Ingress does besides forwarding: the template's request fields,
/// the body limit, HSTS, the HTTPS redirect's form, `upstream-vhost` and a fixed redirect.
fn route_options(annotations: &NginxAnnotations, config: &NginxConfig) -> RouteOptions {
    RouteOptions {
        forwarding: Forwarding::Nginx {
            original_uri: config.original_uri,
        },
        body_limit: Some(annotations.body_limit.unwrap_or(config.body_limit)),
        hsts: config.hsts.clone(),
        https_redirect: HttpsRedirect {
            code: config.redirect_code,
            trim_trailing_slash: !annotations.preserve_trailing_slash,
        },
        upstream_host: annotations.upstream_vhost.clone(),
        cors: annotations.cors.clone(),
        redirect: annotations.redirect.as_ref().map(|fixed| RedirectSpec {
            code: fixed.code,
            scheme: None,
            host: None,
            port: None,
            path: None,
            drop_query: true,
            location: Some(fixed.url.clone()),
        }),
        ..RouteOptions::default()
    }
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
