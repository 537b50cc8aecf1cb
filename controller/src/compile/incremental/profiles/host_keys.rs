//! The keys a profile's Ingresses are kept by: one per host however an Ingress spells it.

use std::collections::BTreeSet;

use shunt_spec::HostMatch;

use crate::{compile::paths::parse_host, objects::Ingress};

/// The host keys an Ingress names: its rules' hosts (`""` for a rule without one, or a default
/// backend), its `spec.tls` hosts and the names the nginx profile adds. Every host its profile claims or gives a verdict for
/// has one of these keys.
pub(super) fn ingress_host_keys(ingress: &Ingress) -> BTreeSet<String> {
    let Some(spec) = ingress.spec.as_ref() else {
        return BTreeSet::new();
    };
    let rules = spec
        .rules
        .iter()
        .flatten()
        .map(|rule| rule.host.as_deref().unwrap_or_default());
    let tls = spec.tls.iter().flatten().flat_map(|entry| entry.hosts.iter().flatten());
    let mut keys: BTreeSet<String> = rules.chain(tls.map(String::as_str)).map(host_key).collect();
    // The nginx profile's aliases and `from-to-www-redirect` names are hosts it serves too.
    keys.extend(
        crate::shadow::nginx::extra_names(ingress)
            .iter()
            .map(|name| host_key(name)),
    );
    if spec.default_backend.is_some() {
        keys.insert(String::new());
    }
    keys
}

/// The key of a host as an Ingress spells it: every spelling of one table host shares it, and
/// a wildcard's key is the same whether a profile reads it as one label or many.
pub(super) fn host_key(raw: &str) -> String {
    match parse_host(raw) {
        Ok(host) => match_key(&host),
        Err(_) => raw.to_ascii_lowercase(),
    }
}

pub(super) fn match_key(host: &HostMatch) -> String {
    match host {
        HostMatch::Exact(name) => name.clone(),
        HostMatch::Wildcard(suffix) | HostMatch::DeepWildcard(suffix) => format!("*.{suffix}"),
        HostMatch::Any => String::new(),
    }
}

/// The table hosts with `key`.
pub(super) fn key_matches(key: &str) -> Vec<HostMatch> {
    match key.strip_prefix("*.") {
        _ if key.is_empty() => vec![HostMatch::Any],
        Some(suffix) => vec![
            HostMatch::Wildcard(suffix.to_string()),
            HostMatch::DeepWildcard(suffix.to_string()),
        ],
        None => vec![HostMatch::Exact(key.to_string())],
    }
}
