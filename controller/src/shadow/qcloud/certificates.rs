//! Certificates for a qcloud Ingress's HTTPS hosts: `--shadow-tls`, then `shunt.dev/tls-secret`,
//! then a `spec.tls` Secret shunt can serve. Never the self-signed fallback: a host without one
//! is refused (`CertificateUnavailable`).

use std::collections::{BTreeMap, BTreeSet};

use shunt_spec::HostMatch;

use super::{HostVerdict, Lb, ShadowOptions, annotations::TLS_SECRET, host_match};
use crate::compile::TlsBuilder;

/// Gives every host with HTTPS rules a certificate shunt can serve, or a refusal reason.
pub(super) fn bind(
    lb: &Lb<'_>,
    certificates: &mut TlsBuilder<'_>,
    options: &ShadowOptions,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    let https: BTreeSet<&str> = lb
        .rules
        .iter()
        .filter(|r| !r.host.is_empty() && r.listeners.serves(true))
        .map(|r| r.host.as_str())
        .collect();
    let spec_secrets: Vec<(Vec<String>, String)> = lb
        .ingress
        .spec
        .iter()
        .flat_map(|spec| spec.tls.iter().flatten())
        .filter_map(|entry| {
            let hosts = entry.hosts.clone().unwrap_or_default();
            Some((hosts, entry.secret_name.clone()?))
        })
        .collect();
    for host in https {
        let Some(verdict) = verdicts.get_mut(host) else {
            continue;
        };
        let Ok(matched) = host_match(host) else { continue };
        // Certificates name one label under a wildcard, whatever the CLB matches.
        let cert_host = match &matched {
            HostMatch::DeepWildcard(suffix) => HostMatch::Wildcard(suffix.clone()),
            other => other.clone(),
        };
        let source = if let Some((namespace, name)) = options.tls.get(host) {
            Some((namespace.as_str(), name.as_str(), "--shadow-tls"))
        } else if let Some(name) = &lb.tls_secret {
            Some((lb.namespace, name.as_str(), TLS_SECRET))
        } else {
            spec_secrets
                .iter()
                .find(|(hosts, _)| hosts.is_empty() || hosts.iter().any(|h| h.eq_ignore_ascii_case(host)))
                .map(|(_, name)| (lb.namespace, name.as_str(), "spec.tls"))
        };
        let Some((namespace, name, via)) = source else {
            verdict.reasons.push(format!(
                "CertificateUnavailable: no certificate for \"{host}\" (give one with {TLS_SECRET} or --shadow-tls)"
            ));
            continue;
        };
        match certificates.bind(&cert_host, namespace, name, &lb.source) {
            Ok(()) => verdict.certificate = Some(format!("{namespace}/{name}")),
            // In a cluster shunt only sees `kubernetes.io/tls` Secrets: TKE's Opaque ones are "not found".
            Err(error) if via == "spec.tls" => verdict.reasons.push(format!(
                "CertificateUnavailable: spec.tls: {error} (a qcloud Ingress's Secret holds a Tencent certificate id; \
                 give a certificate with {TLS_SECRET} or --shadow-tls)"
            )),
            Err(error) => verdict.reasons.push(format!("CertificateUnavailable: {via}: {error}")),
        }
    }
}
