//! `server-alias`: more names for the `server` of each host of the Ingress, served by its
//! locations (alias/main.go; controller.go `createServers`): the first Ingress (oldest) naming
//! the host with aliases gives them, an alias that is another host's name (or a
//! `from-to-www-redirect` server's, written ahead of it) is dropped, and of two hosts given the
//! same alias the first in name order keeps it, as nginx keeps the first `server_name`.
//!
//! ```text
//! Ingress (rules on host h, server-alias: a, b) ─▶ a copy whose rules on h are also on a and b
//!   ─▶ the same claims, verdicts and certificates as h's (HTTPS on an alias when h's
//!      certificate covers it: certificate.lua gives an alias h's certificate only then)
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::Ingress;
use crate::objects::IngressRule;
use shunt_spec::HostMatch;

use super::{
    Nginx,
    annotations::{PREFIX, Refusal, flag},
};
use crate::compile::TlsBuilder;

/// Aliases on one Ingress are bounded: nginx's server-name hash would take more, but a list
/// this long is not one a person wrote.
pub const MAX_ALIASES: usize = 64;

/// `server-alias`: comma-separated names (alias/main.go trims, drops empties and repeats, and
/// sorts). The validator (`ValidateArrayOfServerName`) admits regex characters; shunt serves
/// plain host names only.
pub fn parse(value: &str) -> Result<Vec<String>, Refusal> {
    let mut names = BTreeSet::new();
    for name in value.split(',').map(str::trim).filter(|name| !name.is_empty()) {
        let valid = |b: u8| b.is_ascii_alphanumeric() || b"-._~/:^$[](){}*+?|&=\\".contains(&b);
        if !name.bytes().all(valid) {
            return Err(Refusal::Invalid);
        }
        let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.".contains(&b));
        let exact = plain && matches!(crate::compile::parse_host(name), Ok(HostMatch::Exact(_)));
        if !exact {
            return Err(Refusal::Unsupported);
        }
        names.insert(name.trim_end_matches('.').to_ascii_lowercase());
    }
    if names.len() > MAX_ALIASES {
        return Err(Refusal::Unsupported);
    }
    Ok(names.into_iter().collect())
}

/// The raw aliases of an Ingress that is not a canary (ingress-nginx gives a canary's none);
/// invalid values are the annotation parse's to refuse.
pub fn of(ingress: &Ingress) -> Vec<String> {
    let annotations = ingress.metadata.annotations.as_ref();
    let get = |key: &str| annotations.and_then(|map| map.get(&format!("{PREFIX}{key}")));
    if get("canary").is_some_and(|value| flag(value) == Ok(true)) {
        return Vec::new();
    }
    get("server-alias")
        .and_then(|value| parse(value).ok())
        .unwrap_or_default()
}

/// The aliases each host keeps: `ingresses` in precedence order; `taken` are the names that are
/// hosts or redirect servers already.
pub fn resolve(ingresses: &[&Ingress], taken: &BTreeSet<String>) -> BTreeMap<String, Vec<String>> {
    let mut given: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ingress in ingresses {
        let aliases = of(ingress);
        if aliases.is_empty() {
            continue;
        }
        for (host, _) in super::rule_hosts(ingress) {
            given.entry(host).or_insert_with(|| aliases.clone());
        }
    }
    let mut kept: BTreeSet<String> = BTreeSet::new();
    let mut resolved = BTreeMap::new();
    for (host, aliases) in given {
        let aliases: Vec<String> = aliases
            .into_iter()
            .filter(|alias| *alias != host && !taken.contains(alias) && kept.insert(alias.clone()))
            .collect();
        if !aliases.is_empty() {
            resolved.insert(host, aliases);
        }
    }
    resolved
}

/// `ingress` with each rule on a host of `aliases` repeated for each of its aliases; `None`
/// when it names none of them.
pub fn widened(ingress: &Ingress, aliases: &BTreeMap<String, Vec<String>>) -> Option<Ingress> {
    let rules = ingress.spec.as_ref()?.rules.as_ref()?;
    let mut added: Vec<IngressRule> = Vec::new();
    for rule in rules {
        let host = rule.host.as_deref().map(super::claims::host_name).unwrap_or_default();
        for alias in aliases.get(&host).into_iter().flatten() {
            added.push(IngressRule {
                host: Some(alias.as_str().into()),
                ..rule.clone()
            });
        }
    }
    if added.is_empty() {
        return None;
    }
    let mut widened = ingress.clone();
    let spec = widened.spec.as_mut().expect("rules were read from it");
    spec.rules.get_or_insert_with(Vec::new).extend(added);
    Some(widened)
}

/// Binds `name` (an alias, or a redirect server's name) to the Secret serving `host`'s HTTPS
/// when that certificate covers it, as ingress-nginx gives `name` the host's certificate only
/// then; whether it did.
pub(super) fn bind_like(
    nginxes: &[Nginx<'_>],
    host: &str,
    name: &HostMatch,
    certificates: &mut TlsBuilder<'_>,
) -> bool {
    for nginx in nginxes {
        let tls = nginx.ingress.spec.as_ref().and_then(|spec| spec.tls.as_ref());
        for entry in tls.into_iter().flatten() {
            let names_host = entry
                .hosts
                .iter()
                .flatten()
                .any(|h| super::claims::host_name(h) == host);
            let Some(secret) = entry.secret_name.as_deref().filter(|s| !s.is_empty()) else {
                continue;
            };
            if names_host {
                return certificates.bind(name, nginx.namespace, secret, &nginx.source).is_ok();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests;
