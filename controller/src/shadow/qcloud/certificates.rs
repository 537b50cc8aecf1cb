//! Certificates for a qcloud Ingress's HTTPS hosts: `--shadow-tls`, then `shunt.dev/tls-secret`.
//! A `spec.tls` Secret is TKE's (a Tencent certificate id), never served; one TKE itself rejects
//! refuses the host (`TkeRejects: E4009` / `E4010` / `E4011`). Never the self-signed fallback: a host
//! without a certificate is refused (`CertificateUnavailable`).

use std::collections::{BTreeMap, BTreeSet};

use shunt_spec::HostMatch;

use super::{HostVerdict, Lb, ShadowOptions, annotations::TLS_SECRET, host_match};
use crate::compile::{CertId, TlsBuilder};

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
    let spec_secrets: Vec<(Vec<String>, Option<String>)> = lb
        .ingress
        .spec
        .iter()
        .flat_map(|spec| spec.tls.iter().flatten())
        .map(|entry| (entry.hosts.clone().unwrap_or_default(), entry.secret_name.clone()))
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
        let spec_secret = spec_secrets
            .iter()
            .find(|(hosts, _)| hosts.is_empty() || hosts.iter().any(|h| h.eq_ignore_ascii_case(host)))
            .map(|(_, name)| name.as_deref().filter(|name| !name.is_empty()));
        if let Some(rejects) = tke_rejects(lb, certificates, host, spec_secret) {
            verdict.reasons.push(rejects);
            continue;
        }
        let source = if let Some((namespace, name)) = options.tls.get(host) {
            Some((namespace.as_str(), name.as_str(), "--shadow-tls"))
        } else {
            lb.tls_secret.as_deref().map(|name| (lb.namespace, name, TLS_SECRET))
        };
        let Some((namespace, name, via)) = source else {
            let held = spec_secret.flatten().map_or(String::new(), |name| {
                format!(
                    " (spec.tls Secret {}/{name} holds a Tencent certificate id, qcloud_cert_id, never PEM)",
                    lb.namespace
                )
            });
            verdict.reasons.push(format!(
                "CertificateUnavailable: no certificate for \"{host}\"{held}: give one with {TLS_SECRET} or --shadow-tls"
            ));
            continue;
        };
        match certificates.bind(&cert_host, namespace, name, &lb.source) {
            Ok(()) => verdict.certificate = Some(format!("{namespace}/{name}")),
            Err(error) => verdict.reasons.push(format!("CertificateUnavailable: {via}: {error}")),
        }
    }
}

/// TKE's own refusal of the host's HTTPS, if it refuses: the `spec.tls` entry has no Secret
/// name (E4009), its Secret does not exist (E4010, known where every Secret is listed), or it
/// holds no `qcloud_cert_id` (E4011, a PEM `kubernetes.io/tls` Secret among them). TKE then creates no HTTPS listener for the host: the CLB answers nothing
/// there, so shunt must not either, whatever certificate it was given.
fn tke_rejects(
    lb: &Lb<'_>,
    certificates: &TlsBuilder<'_>,
    host: &str,
    spec_secret: Option<Option<&str>>,
) -> Option<String> {
    let namespace = lb.namespace;
    match spec_secret? {
        None => Some(format!(
            "TkeRejects: E4009 the spec.tls entry for \"{host}\" names no Secret: the CLB has no HTTPS for it"
        )),
        Some(name) => match certificates.qcloud_cert_id(namespace, name) {
            CertId::Lacking => Some(format!(
                "TkeRejects: E4011 Secret {namespace}/{name} has no qcloud_cert_id: the CLB has no HTTPS for \"{host}\""
            )),
            CertId::NoSecret => Some(format!(
                "TkeRejects: E4010 Secret {namespace}/{name} not found: the CLB has no HTTPS for \"{host}\""
            )),
            CertId::Held | CertId::Unknown => None,
        },
    }
}
