//! The qcloud profile: shadowed TKE Ingresses compiled the way TKE's CLB serves them, so an
//! in-cluster caller whose DNS now points at shunt gets the CLB's answer, or keeps the CLB.
//!
//! ```text
//! qcloud Ingresses ─annotations─▶ rules::split (listener per rule, redirects)
//!       │                              └─▶ CLB paths and hosts ─claim─▶ table (exclusive hosts)
//!       ├─ certificates (--shadow-tls, shunt.dev/tls-secret, spec.tls) ─▶ TlsBuilder
//!       └─ the TkeServiceConfig it names (service_config) ─▶ reasons per host
//! per host: reasons ─▶ HostVerdict { identical | refused } ─▶ /shadow, DNS, diagnostics
//! ```
//!
//! Unlike Ingress-spec semantics, each qcloud Ingress is its own load balancer: its rules never
//! mix with another's, a host two of them claim is ambiguous, and a known host answers 404 for
//! paths it lacks instead of falling through.

mod annotations;
mod certificates;
mod hosts;
pub(crate) mod keys;
mod redirect_rules;
mod route;
mod rules;
pub mod service_config;
mod session;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::objects::{Annotations, Ingress};
use shunt_spec::{HostMatch, PathKind};

pub use self::annotations::TLS_SECRET;
use self::{
    rules::ClbRule,
    service_config::{Named, ServiceConfigs, Sessions},
};
use super::{HostVerdict, IngressVerdict, OwnProfile, ProfileConfig, ShadowOptions, Verdicts, verdict::has_catch_all};
use crate::compile::{Diagnostic, Reason, Sink, TlsBuilder, namespace_name, paths};

/// The profile's name in the `/shadow` document.
pub const PROFILE: &str = "qcloud";

/// What shunt assumes of the CLB where TKE's documentation is not precise; `/shadow` lists it.
pub const ASSUMED: [&str; 10] = [
    "paths are CLB URL rules (nginx locations): a character prefix, longest wins; pathType Exact is nginx '='",
    "a rule ending in '/' answers the same path without it with 301 to the rule",
    "a wildcard '*.domain' matches any number of labels; an exact domain beats it",
    "a request for a known domain that no rule matches gets 404; an unknown domain goes to the default domain (host-less rules)",
    "auto-rewrite without auto-rewrite-code redirects with the --shadow-rewrite-code default (302)",
    "redirects keep the query string",
    "X-Client-Proto is http or https by listener; X-Forwarded-For/-Proto as shunt always sets them; X-Real-IP is not sent",
    "a port the CLB does not listen on gets 404 from shunt instead of a refused connection",
    "a TkeServiceConfig segment for the default domain applies to a host the default domain serves on that listener",
    "a TkeServiceConfig session (WRR) is a cookie tgw_l7_route with Path=/ and HttpOnly expiring after sessionExpireTime, its value shunt's own",
];

/// The header the CLB sets to the client's protocol (documented for backends).
pub const CLIENT_PROTO_HEADER: &str = "X-Client-Proto";

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
    /// `direct-access: "true"`: ClusterIP backends are reachable (no E4047).
    direct_access: bool,
    /// Reasons its TkeServiceConfig gives named hosts, by host.
    host_problems: BTreeMap<String, Vec<String>>,
    /// Reasons its TkeServiceConfig gives the default domain (the catch-all).
    default_domain_problems: Vec<String>,
    /// Its TkeServiceConfig's rules with cookie sessions.
    sessions: Sessions,
}

/// TKE's CLB ([`OwnProfile`]).
pub struct TkeClb;

impl OwnProfile for TkeClb {
    fn name(&self) -> &'static str {
        PROFILE
    }

    fn assumed(&self) -> &'static [&'static str] {
        &ASSUMED
    }

    fn no_effect(&self) -> Vec<String> {
        let fields = service_config::NO_EFFECT_FIELDS.iter();
        keys::NO_EFFECT
            .iter()
            .chain(fields)
            .map(|key| key.to_string())
            .collect()
    }

    fn compile(
        &self,
        ingresses: &[&Ingress],
        sink: &mut Sink<'_>,
        certificates: &mut TlsBuilder<'_>,
        options: &ShadowOptions,
        config: &ProfileConfig,
    ) -> Verdicts {
        compile(ingresses, sink, certificates, options, &config.qcloud)
    }
}

/// Compiles `ingresses` (in precedence order) into `sink` and `certificates`; returns a verdict
/// per named host, sorted by host, and one per Ingress with a default domain (a catch-all).
fn compile(
    ingresses: &[&Ingress],
    sink: &mut Sink<'_>,
    certificates: &mut TlsBuilder<'_>,
    options: &ShadowOptions,
    configs: &ServiceConfigs,
) -> Verdicts {
    let lbs: Vec<Lb<'_>> = ingresses
        .iter()
        .map(|ingress| prepare(ingress, options, configs, &mut sink.diagnostics))
        .collect();
    let mut verdicts = hosts::named(&lbs);
    for lb in &lbs {
        for (host, reasons) in &lb.host_problems {
            if let Some(verdict) = verdicts.get_mut(host) {
                verdict.reasons.extend(reasons.iter().cloned());
            }
        }
    }
    let qcloud_sources = lbs.iter().map(|lb| lb.source.as_str()).collect();
    for lb in &lbs {
        route::claim(lb, sink, &qcloud_sources, &mut verdicts);
    }
    for lb in &lbs {
        certificates::bind(lb, certificates, options, &mut verdicts);
    }
    let hosts = hosts::settle(verdicts, &mut sink.diagnostics);
    // Reached by the load balancer's address only, which DNS never moves: listed, not routed
    // by name, and a refused one is a diagnostic.
    let ingresses = (lbs.iter())
        .filter(|lb| has_catch_all(lb.ingress))
        .map(|lb| {
            let problems = [lb.problems.as_slice(), &lb.default_domain_problems].concat();
            IngressVerdict::catch_all(&lb.source, &problems, &mut sink.diagnostics)
        })
        .collect();
    Verdicts { hosts, ingresses }
}

fn prepare<'i>(
    ingress: &'i Ingress,
    options: &ShadowOptions,
    configs: &ServiceConfigs,
    diagnostics: &mut Vec<Diagnostic>,
) -> Lb<'i> {
    let (namespace, name) = namespace_name(&ingress.metadata);
    let parsed = annotations::parse(ingress);
    let (rules, mut problems) = rules::split(ingress, &parsed, options.default_rewrite_code);
    let empty = Annotations::default();
    let annotations = ingress.metadata.annotations.as_ref().unwrap_or(&empty);
    let mut sessions = Sessions::default();
    let (host_problems, default_domain_problems) = match configs.named(namespace, name, annotations) {
        Named::None => Default::default(),
        Named::Refused(reason) => {
            problems.push(reason);
            Default::default()
        }
        Named::Config(config) => {
            sessions = config.sessions().clone();
            service_config::by_host(&rules, config)
        }
    };
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
        direct_access: parsed.direct_access,
        host_problems,
        default_domain_problems,
        sessions,
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
