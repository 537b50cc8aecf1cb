//! A qcloud Ingress's CLB rules into the table: each rule a path claim on its listeners (a
//! forward or a redirect), its host exclusive, and every problem a diagnostic.

use std::collections::{BTreeMap, BTreeSet};

use shunt_spec::{CookieAffinity, HostMatch, Listeners, RouteOptions};

use super::{
    CLIENT_PROTO_HEADER, HostVerdict, Lb,
    annotations::DIRECT_ACCESS,
    clb_path, host_match,
    rules::{Action, ClbRule, known_on},
    session,
};
use crate::compile::{Diagnostic, PathClaim, Reason, RouteSettings, Sink};

/// Claims the Ingress's rules. A host without rules on one listener gets the Ingress's
/// default-domain rules there (the CLB's listener does not know it), or none: 404.
pub(super) fn claim(
    lb: &Lb<'_>,
    sink: &mut Sink<'_>,
    qcloud_sources: &BTreeSet<&str>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    for rule in &with_default_domain(lb) {
        if let Some(rejects) = rejects_backend(lb, rule, sink) {
            if let Some(verdict) = verdicts.get_mut(&rule.host) {
                verdict.reasons.push(rejects);
            }
            continue;
        }
        let affinity = match session::cookie(lb, rule) {
            Ok(affinity) => affinity,
            Err(reason) => {
                if let Some(verdict) = verdicts.get_mut(&rule.host) {
                    verdict.reasons.push(reason);
                }
                continue;
            }
        };
        let Some(claim) = path_claim(lb, rule, affinity, sink) else {
            continue;
        };
        match sink.table.claim(&claim, &lb.source) {
            Ok(()) => report_no_endpoints(lb, &claim, sink),
            Err(holder) if holder == lb.source => {}
            Err(holder) => {
                let (path, host) = (&claim.path, &claim.host);
                let message = format!("path {path:?} on host \"{host}\" is already routed by ingress {holder:?}");
                report(lb, sink, Reason::Conflict, message);
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
        if claim.host != HostMatch::Any {
            sink.table.set_exclusive(&claim.host);
        }
    }
}

/// The Ingress's rules, plus its default-domain rules for each of its hosts on a listener
/// where the host has none.
fn with_default_domain(lb: &Lb<'_>) -> Vec<ClbRule> {
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
            if known_on(&lb.rules, host, tls) {
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
    rules
}

/// TKE's E4047: without `direct-access` the CLB forwards to node ports, which a ClusterIP
/// Service has none of, so TKE binds no backend and the CLB serves nothing for the rule.
fn rejects_backend(lb: &Lb<'_>, rule: &ClbRule, sink: &Sink<'_>) -> Option<String> {
    let Action::Forward(backend) = &rule.action else {
        return None;
    };
    let service = backend.service.as_ref()?;
    let type_ = sink.backends.service_type(lb.namespace, &service.name)?;
    (type_ == "ClusterIP" && !lb.direct_access).then(|| {
        format!(
            "TkeRejects: E4047 Service {}/{} is ClusterIP and the Ingress lacks {DIRECT_ACCESS}: \"true\": the CLB serves nothing there",
            lb.namespace, service.name
        )
    })
}

/// The claim a rule makes; `None`, with a diagnostic, when its host, path or backend is unusable.
fn path_claim(lb: &Lb<'_>, rule: &ClbRule, affinity: Option<CookieAffinity>, sink: &mut Sink<'_>) -> Option<PathClaim> {
    let host = match host_match(&rule.host) {
        Ok(host) => host,
        Err(error) => {
            let message = format!("invalid host {:?}, rule skipped: {error}", rule.host);
            report(lb, sink, Reason::InvalidHost, message);
            return None;
        }
    };
    let (kind, path) = match clb_path(rule.path.as_deref(), &rule.path_type) {
        Ok(parsed) => parsed,
        Err(error) => {
            let message = format!("invalid path {:?} on host \"{host}\": {error}", rule.path);
            report(lb, sink, Reason::InvalidPath, message);
            return None;
        }
    };
    let (backend, redirect) = match &rule.action {
        Action::Forward(backend) => match sink.backends.resolve(lb.namespace, backend, None) {
            Ok(resolved) => (Some(resolved), None),
            Err(error) => {
                let message = format!("{error} for path {path:?} on host \"{host}\"");
                report(lb, sink, error.reason(), message);
                return None;
            }
        },
        Action::Redirect(redirect) => (None, Some(redirect.spec())),
    };
    let options = RouteOptions {
        listeners: rule.listeners,
        redirect,
        client_protocol_header: Some(CLIENT_PROTO_HEADER.to_string()),
        affinity,
        ..RouteOptions::default()
    };
    Some(PathClaim {
        host,
        path,
        kind,
        backend,
        route: RouteSettings::from(options),
    })
}

/// Each claim that won reports its backend without endpoints (the CLB answers for each rule).
fn report_no_endpoints(lb: &Lb<'_>, claim: &PathClaim, sink: &mut Sink<'_>) {
    if let Some(resolved) = claim.backend.as_deref().filter(|b| b.spec.endpoints.is_empty()) {
        let (id, path, host) = (&resolved.id, &claim.path, &claim.host);
        let message = format!("backend {id:?} has no ready endpoints for path {path:?} on host \"{host}\"");
        report(lb, sink, Reason::NoEndpoints, message);
    }
}

fn report(lb: &Lb<'_>, sink: &mut Sink<'_>, reason: Reason, message: String) {
    sink.diagnostics
        .push(Diagnostic::new(lb.namespace, lb.name, reason, message));
}
