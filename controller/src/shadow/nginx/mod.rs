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

mod affinity;
mod alias;
pub mod annotations;
mod app_root;
mod auth;
mod canary;
mod claims;
pub mod config;
mod cors;
mod denied;
mod errors;
mod forwarding;
mod global_auth;
mod hash;
mod keys;
mod limits;
mod next_upstream;
mod pace;
mod paths;
mod proxy_ssl;
mod regex;
mod source_ranges;
mod timeouts;
mod www;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::Ingress;
use shunt_spec::{HostMatch, UpstreamProtocol};

use self::{
    annotations::NginxAnnotations,
    config::{NginxConfig, SnippetPolicy},
};
use self::{canary::Canaries, claims::Walk};
use super::{HostVerdict, IngressVerdict, OwnProfile, Verdicts, verdict};
use crate::compile::{Diagnostic, Reason, Sink, TlsBuilder, namespace_name};

/// The profile's name in `--shadow-class NAME=nginx` and the `/shadow` document.
pub const PROFILE: &str = "nginx";

/// What shunt assumes of ingress-nginx (its defaults, no ConfigMap keys set); `/shadow` lists it.
pub const ASSUMED: [&str; 11] = [
    "a ConfigMap key not set has ingress-nginx's default (config.go): ssl-redirect true, http-redirect-code 308, hsts true with max-age 31536000 and includeSubDomains, proxy-body-size 1m, use-forwarded-headers false, generate-request-id true, annotations-risk-level High, allow-snippet-annotations false",
    "ingress-nginx listens on 80 and 443 in its pod (X-Forwarded-Port), keeps upstream connections alive (no Connection field to the pod) and runs its default template",
    "pathType ImplementationSpecific (and a missing pathType) is Prefix, as internal/k8s/main.go converts it",
    "a Prefix path '/p' is nginx's '= /p' plus '/p/'; a Prefix path ending in '/' is that character prefix alone",
    "the oldest Ingress (creationTimestamp) holds a path two of them name",
    "a host has a certificate when a spec.tls entry of an nginx Ingress names it exactly and its Secret is usable",
    "a request body is checked against proxy-body-size by its Content-Length; a chunked body over the limit gets 413 once it passes the limit, after the pod has seen its start (nginx buffers it first)",
    "nginx.ingress.kubernetes.io/* keys that change only buffering, logging, tracing or endpoint choice have no effect on the answer",
    "nginx.ingress.kubernetes.io/* keys no annotation parser of ingress-nginx v1.15 reads are ignored, as nginx ignores them (a host lists them under ignored)",
    "a request body over 64 KiB already partly sent is not sent to another pod (shunt keeps the first 64 KiB for a resend; nginx buffers the whole body and would retry it under proxy-next-upstream)",
    "a pod behind backend-protocol HTTPS speaks TLS 1.2 or 1.3 with an AEAD cipher (shunt's TLS client), and shunt runs without --upstream-ca-bundle, so, as nginx without proxy-ssl-secret, it checks neither the pod's certificate nor sends SNI",
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
    /// Why ingress-nginx denies every location of this Ingress (`return 503;`, see `denied.rs`).
    denied: Option<String>,
}

/// ingress-nginx ([`OwnProfile`]), with its ConfigMap's keys.
pub struct IngressNginx;

impl OwnProfile for IngressNginx {
    fn name(&self) -> &'static str {
        PROFILE
    }

    fn assumed(&self) -> &'static [&'static str] {
        &ASSUMED
    }

    fn no_effect(&self) -> Vec<String> {
        let keys = annotations::NO_EFFECT.iter();
        keys.map(|key| format!("{}{key}", annotations::PREFIX)).collect()
    }

    fn compile(
        &self,
        ingresses: &[&Ingress],
        sink: &mut Sink<'_>,
        certificates: &mut TlsBuilder<'_>,
        options: &super::ShadowOptions,
        config: &super::ProfileConfig,
    ) -> Verdicts {
        let default_backend = options.nginx_default_backend.as_ref();
        compile(ingresses, sink, certificates, (&config.nginx, default_backend))
    }
}

/// Compiles `ingresses` (in precedence order) into `sink` and `certificates`; returns a verdict
/// per named host, sorted by host, and one per skipped or catch-all Ingress.
fn compile(
    ingresses: &[&Ingress],
    sink: &mut Sink<'_>,
    certificates: &mut TlsBuilder<'_>,
    (config, default_backend): (&NginxConfig, Option<&(String, String)>),
) -> Verdicts {
    // Aliases are decided on the Ingresses as written; each then serves its host's rules.
    let aliases = aliases(ingresses);
    let widened: Vec<Option<Ingress>> = ingresses.iter().map(|i| alias::widened(i, &aliases)).collect();
    let ingresses: Vec<&Ingress> = (ingresses.iter().zip(&widened))
        .map(|(ingress, widened)| widened.as_ref().unwrap_or(ingress))
        .collect();
    let mut all: Vec<Nginx<'_>> = Vec::with_capacity(ingresses.len());
    let mut skipped = Vec::new();
    for ingress in ingresses {
        match prepare(ingress, config, &mut sink.diagnostics) {
            Ok(nginx) => all.push(nginx),
            Err(entry) => skipped.push(entry),
        }
    }
    for nginx in &mut all {
        proxy_ssl::apply(nginx, certificates, config, sink);
    }
    let hashes = hash::by_backend(&all.iter().collect::<Vec<_>>(), sink);
    // A canary Ingress serves no location of its own (controller.go, `createServers`).
    let (canaries, nginxes): (Vec<Nginx<'_>>, Vec<Nginx<'_>>) =
        all.into_iter().partition(|nginx| nginx.annotations.canary.is_some());
    for nginx in &nginxes {
        certificates.ingress(nginx.ingress, &mut sink.diagnostics);
    }
    let mut tls_hosts = certificate_hosts(&nginxes);
    tls_hosts.extend(alias_tls_hosts(&aliases, &nginxes, certificates));
    // A Secret shunt cannot serve is one ingress-nginx cannot either: it answers with its default
    // certificate and does not redirect (lua_ingress.lua, `certificate_configured_for_current_request`).
    let served = |host: &&String| crate::compile::parse_host(host).is_ok_and(|matched| certificates.serves(&matched));
    let redirects = Redirects {
        with_certificate: tls_hosts.iter().filter(served).cloned().collect(),
        exempt: &config.no_tls_redirect,
    };
    let mut verdicts = named(&nginxes, &tls_hosts);
    canaries_on_hosts(&canaries, &mut verdicts);
    proxy_ssl::refuse_mixed(&nginxes, &canaries, &mut verdicts);
    let alias_names: BTreeSet<&String> = aliases.values().flatten().collect();
    let redirects_www = www::redirects(&nginxes, &alias_names, &mut verdicts);
    let merged = Canaries::merge(&nginxes, &canaries, &hashes, sink, &mut verdicts);
    let affinities = affinity::by_backend(&nginxes, sink);
    affinity::refuse(&nginxes, &affinities, &merged, sink, &mut verdicts);
    let walk = Walk {
        canaries: merged,
        hashes,
        affinities,
        redirects: &redirects,
        config,
        default_backend,
        sources: nginxes.iter().map(|n| n.source.as_str()).collect(),
        regex_hosts: regex::hosts(&nginxes),
    };
    // `app-root` is a server-level `if`: it answers `/` before any location of the host.
    for nginx in &nginxes {
        app_root::claim(nginx, sink, &walk, &mut verdicts);
    }
    for host in &walk.regex_hosts {
        regex::claim_host(host, &nginxes, sink, &walk, &mut verdicts);
    }
    for nginx in &nginxes {
        claims::claim(nginx, sink, &walk, &mut verdicts);
    }
    www::claim(&redirects_www, &nginxes, sink, certificates, config, &mut verdicts);
    let hosts = verdict::settle_all(verdicts, &mut sink.diagnostics);
    // Host-less rules are the default server's (any Host no `server` names): a refused one
    // is said like a refused host, never dropped unseen.
    let catch_alls = (nginxes.iter())
        .filter(|nginx| verdict::has_catch_all(nginx.ingress))
        .map(|nginx| IngressVerdict::catch_all(&nginx.source, &nginx.problems, &mut sink.diagnostics));
    let ingresses = skipped.into_iter().chain(catch_alls).collect();
    Verdicts { hosts, ingresses }
}

/// The aliases with their host's certificate, where it covers them (nginx.go,
/// `configureCertificates`).
fn alias_tls_hosts(
    aliases: &BTreeMap<String, Vec<String>>,
    nginxes: &[Nginx<'_>],
    certificates: &mut TlsBuilder<'_>,
) -> Vec<String> {
    let mut bound = Vec::new();
    for (host, names) in aliases {
        for name in names {
            let matched = crate::compile::parse_host(name);
            if matched.is_ok_and(|matched| alias::bind_like(nginxes, host, &matched, certificates)) {
                bound.push(name.clone());
            }
        }
    }
    bound
}

/// The aliases each host keeps, given the hosts and `from-to-www-redirect` servers the
/// Ingresses name (ingress-nginx drops an alias naming either).
fn aliases(ingresses: &[&Ingress]) -> BTreeMap<String, Vec<String>> {
    let hosts: BTreeSet<String> = ingresses
        .iter()
        .flat_map(|i| rule_hosts(i))
        .map(|(host, _)| host)
        .collect();
    let mut taken = hosts.clone();
    for ingress in ingresses.iter().filter(|ingress| www::asks(ingress)) {
        let others = rule_hosts(ingress)
            .into_iter()
            .filter_map(|(host, _)| www::other_name(&host));
        taken.extend(others.filter(|other| !hosts.contains(other)));
    }
    alias::resolve(ingresses, &taken)
}

/// Names an Ingress may make its profile serve beyond the hosts it names: the other names of
/// `from-to-www-redirect` and the `server-alias` names (for the incremental compile's groups).
pub fn extra_names(ingress: &Ingress) -> Vec<String> {
    let mut names = alias::of(ingress);
    if www::asks(ingress) {
        names.extend(
            rule_hosts(ingress)
                .into_iter()
                .filter_map(|(host, _)| www::other_name(&host)),
        );
    }
    names
}

/// The Ingress as the profile reads it; skipped, with a diagnostic, when ingress-nginx would
/// serve none of it.
fn prepare<'i>(
    ingress: &'i Ingress,
    config: &NginxConfig,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Nginx<'i>, IngressVerdict> {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let mut annotations = annotations::parse(ingress);
    annotations.ssl_redirect = annotations.ssl_redirect.or(Some(config.ssl_redirect));
    let mut problems = annotations.refusals.clone();
    problems.extend(config.refusals.iter().cloned());
    if let (Some(auth), Some(reference)) = (&mut annotations.external_auth, &annotations.auth_set_headers) {
        match auth::set_headers::resolve(reference, namespace, &config.config_maps) {
            Ok(fields) => auth.set_headers = fields,
            Err(refusal) => problems.push(refusal),
        }
    }
    // The gate the Ingress gets: its own auth-url, else the ConfigMap's global one.
    let gate = (config.auth).gate(annotations.external_auth.as_ref(), !annotations.no_global_auth);
    problems.extend(forwarding::auth_refusal(gate.as_ref(), config.forwarding.as_ref()));
    if let Some(snippet) = annotations.snippets.first() {
        match config.snippets {
            SnippetPolicy::RejectIngress => {
                let message = format!(
                    "{snippet} is a snippet (Critical risk), above the ConfigMap's annotations-risk-level: ingress-nginx serves none of this Ingress, and neither does shunt"
                );
                diagnostics.push(Diagnostic::new(namespace, name, Reason::InvalidAnnotation, message));
                let reason = format!(
                    "SnippetRejected: {snippet}: annotations-risk-level is below Critical (High, the default of ingress-nginx 1.12 and later, which rejects the whole Ingress)"
                );
                return Err(IngressVerdict::skipped(&format!("{namespace}/{name}"), reason));
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
    // ingress-nginx gives the Ingress's hosts this backend as their `/` location
    // (internal/ingress/controller/controller.go, `createServers`); not reproduced, unless a `/`
    // path of every rule replaces that location, when it answers nothing.
    if ingress.spec.as_ref().is_some_and(|spec| spec.default_backend.is_some()) && !roots_every_rule(ingress) {
        problems.push("UnsupportedField: spec.defaultBackend".to_string());
    }
    // grpc_send_timeout: shunt's HTTP/2 client to pods keeps no timer between writes.
    let send = annotations.timeouts.or(config.timeouts).send;
    if annotations.backend_protocol.is_some_and(UpstreamProtocol::is_h2)
        && send.is_some_and(|s| u64::from(s) != shunt_spec::defaults::UPSTREAM_TIMEOUT.as_secs())
    {
        problems.push(format!(
            "UnsupportedAnnotation: {}proxy-send-timeout",
            annotations::PREFIX
        ));
    }
    Ok(Nginx {
        ingress,
        namespace,
        name,
        source: format!("{namespace}/{name}"),
        annotations,
        problems,
        denied: None,
    })
}

/// Whether every rule of `ingress` has a path `/` of type Prefix or ImplementationSpecific (or
/// none), which replaces the host's root location the default backend would answer; a rule
/// without one (or no rule at all) leaves the default backend answering.
fn roots_every_rule(ingress: &Ingress) -> bool {
    let rules = ingress
        .spec
        .as_ref()
        .and_then(|spec| spec.rules.as_deref())
        .unwrap_or_default();
    let root = |path: &crate::objects::HTTPIngressPath| {
        path.path.as_deref() == Some("/")
            && paths::nginx_path(Some("/"), &path.path_type).is_ok_and(|(kind, _)| kind != shunt_spec::PathKind::Exact)
    };
    let rooted =
        |rule: &crate::objects::IngressRule| rule.http.as_ref().is_some_and(|http| http.paths.iter().any(root));
    !rules.is_empty() && rules.iter().all(rooted)
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

/// A verdict for each host a rule names, with the reasons its Ingresses give.
fn named(nginxes: &[Nginx<'_>], with_certificate: &BTreeSet<String>) -> BTreeMap<String, HostVerdict> {
    let mut verdicts: BTreeMap<String, HostVerdict> = BTreeMap::new();
    for nginx in nginxes {
        for (host, matched) in rule_hosts(nginx.ingress) {
            let verdict = verdicts.entry(host.clone()).or_insert_with(|| {
                let mut verdict = HostVerdict::new(host.clone(), matched);
                verdict.add_listener("http");
                if with_certificate.contains(&host) {
                    verdict.add_listener("https");
                }
                verdict
            });
            verdict.ingresses.push(nginx.source.clone());
            verdict.reasons.extend(nginx.problems.iter().cloned());
            verdict.ignored.extend(nginx.annotations.ignored.iter().cloned());
            verdict.no_effect.extend(nginx.annotations.no_effect.iter().cloned());
        }
    }
    verdicts
}

/// A canary Ingress's reasons refuse the hosts its main Ingresses name; a host only canaries
/// name has no server in ingress-nginx, and no verdict here.
fn canaries_on_hosts(canaries: &[Nginx<'_>], verdicts: &mut BTreeMap<String, HostVerdict>) {
    for nginx in canaries {
        for (host, _) in rule_hosts(nginx.ingress) {
            if let Some(verdict) = verdicts.get_mut(&host) {
                verdict.ingresses.push(nginx.source.clone());
                verdict.reasons.extend(nginx.problems.iter().cloned());
            }
        }
    }
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

fn report(nginx: &Nginx<'_>, sink: &mut Sink<'_>, reason: Reason, message: String) {
    sink.diagnostics
        .push(Diagnostic::new(nginx.namespace, nginx.name, reason, message));
}
