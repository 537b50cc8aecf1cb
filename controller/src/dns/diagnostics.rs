//! Refused hosts become diagnostics on every served Ingress that names them, so each owner sees
//! (as a Warning Event, a log line and in the diagnostics metric) why cluster DNS leaves the
//! host alone.

use crate::objects::Ingress;
use shunt_spec::HostMatch;
use tracing::warn;

use super::policy::{Refusal, RefusalReason};
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
        let (namespace, name) = (
            ingress.metadata.namespace.clone().unwrap_or_default(),
            ingress.metadata.name.clone().unwrap_or_default(),
        );
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
        // Refusals from elsewhere (the shadow profile) carry their own diagnostic already.
        let own = refused
            .iter()
            .filter(|r| !matches!(r.reason, RefusalReason::Other { .. }));
        for refusal in own.filter(|r| hosts.contains(&r.host)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        dns::DnsPolicy,
        fixtures::{mk_ingress, mk_prefix, mk_rule},
    };

    fn mk_served(namespace: &str, name: &str) -> ServedIngress {
        ServedIngress {
            namespace: namespace.to_string(),
            name: name.to_string(),
            shadow: false,
        }
    }

    #[test]
    fn each_served_ingress_naming_a_refused_host_gets_one_diagnostic() {
        let hostile = mk_ingress(
            "team-a",
            "hostile",
            vec![
                mk_rule("*.com", vec![mk_prefix("/", "web", 80)]),
                mk_rule("shop.example.com", vec![mk_prefix("/", "web", 80)]),
            ],
        );
        let also = mk_ingress(
            "team-b",
            "also",
            vec![mk_rule("*.com", vec![mk_prefix("/", "web", 80)])],
        );
        let foreign = mk_ingress(
            "team-c",
            "nginx",
            vec![mk_rule("*.com", vec![mk_prefix("/", "web", 80)])],
        );
        let hosts = [
            HostMatch::from_rule_host("*.com"),
            HostMatch::from_rule_host("shop.example.com"),
        ];
        let plan = DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&hosts);
        let served = [mk_served("team-a", "hostile"), mk_served("team-b", "also")];
        let diagnostics = refusal_diagnostics(&plan.refused, [&hostile.into(), &also.into(), &foreign.into()], &served);
        let named: Vec<(&str, &str, Reason)> = diagnostics
            .iter()
            .map(|d| (d.namespace.as_str(), d.name.as_str(), d.reason))
            .collect();
        assert_eq!(
            named,
            [
                ("team-a", "hostile", Reason::DnsRewriteRefused),
                ("team-b", "also", Reason::DnsRewriteRefused),
            ],
            "not the unserved Ingress, nothing for the allowed host"
        );
        assert_eq!(
            diagnostics[0].message,
            "host *.com is served but cluster DNS does not send it to shunt: a wildcard directly under the public suffix com"
        );
    }
}
