//! Refused hosts become diagnostics on every served Ingress that names them, so each owner sees
//! (as a Warning Event, a log line and in the diagnostics metric) why cluster DNS leaves the
//! host alone.

use k8s_openapi::api::networking::v1::Ingress;
use kube::ResourceExt;
use shunt_proxy::routes::spec::HostMatch;
use tracing::warn;

use super::policy::Refusal;
use crate::compile::{Diagnostic, Reason, ServedIngress};

/// One `DnsRewriteRefused` diagnostic per (served Ingress, refused host it names in a rule).
pub fn refusal_diagnostics<'a>(
    refused: &[Refusal],
    ingresses: impl IntoIterator<Item = &'a Ingress>,
    served: &[ServedIngress],
) -> Vec<Diagnostic> {
    if refused.is_empty() {
        return Vec::new();
    }
    let mut diagnostics = Vec::new();
    for ingress in ingresses {
        let (namespace, name) = (ingress.namespace().unwrap_or_default(), ingress.name_any());
        if !served.iter().any(|s| s.namespace == namespace && s.name == name) {
            continue;
        }
        let hosts: Vec<HostMatch> = ingress
            .spec
            .iter()
            .flat_map(|spec| spec.rules.iter().flatten())
            .filter_map(|rule| rule.host.as_deref())
            .map(HostMatch::from_rule_host)
            .collect();
        for refusal in refused.iter().filter(|r| hosts.contains(&r.host)) {
            diagnostics.push(Diagnostic::new(
                &namespace,
                &name,
                Reason::DnsRewriteRefused,
                format!(
                    "host {} is served but cluster DNS does not send it to shunt: {}",
                    refusal.host, refusal.reason
                ),
            ));
        }
    }
    diagnostics.sort_by(|a, b| (&a.namespace, &a.name, &a.message).cmp(&(&b.namespace, &b.name, &b.message)));
    diagnostics
}

/// Logs the diagnostics not in `previous` (once each while they last), then remembers `current`.
pub fn log_new(previous: &mut Vec<Diagnostic>, current: Vec<Diagnostic>) {
    for diagnostic in current.iter().filter(|d| !previous.contains(d)) {
        warn!(ingress = %format!("{}/{}", diagnostic.namespace, diagnostic.name), reason = %diagnostic.reason, note = %diagnostic.message, "Host left out of cluster DNS");
    }
    *previous = current;
}
