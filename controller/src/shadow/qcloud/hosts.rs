//! The verdict of each host the qcloud Ingresses name: who names it on which listeners, which
//! load balancers (more than one is ambiguous), then identical or refused with a diagnostic.

use std::collections::{BTreeMap, BTreeSet};

use shunt_spec::Listeners;

use super::{HostVerdict, Lb, host_match};
use crate::compile::Diagnostic;

/// A verdict for each host a rule names, by host, with the reasons its Ingresses give.
pub(super) fn named(lbs: &[Lb<'_>]) -> BTreeMap<String, HostVerdict> {
    let mut verdicts: BTreeMap<String, HostVerdict> = BTreeMap::new();
    let mut keys: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for lb in lbs {
        for rule in lb.rules.iter().filter(|rule| !rule.host.is_empty()) {
            let Ok(matched) = host_match(&rule.host) else { continue };
            let verdict = verdicts
                .entry(rule.host.clone())
                .or_insert_with(|| HostVerdict::new(rule.host.clone(), matched));
            verdict.ingresses.push(lb.source.clone());
            verdict.reasons.extend(lb.problems.iter().cloned());
            for listener in listener_names(rule.listeners) {
                verdict.add_listener(listener);
            }
            keys.entry(rule.host.clone()).or_default().insert(&lb.key);
        }
    }
    for (host, lb_keys) in &keys {
        if lb_keys.len() > 1
            && let Some(verdict) = verdicts.get_mut(host)
        {
            let mut sources = verdict.ingresses.clone();
            sources.dedup();
            let reason = format!(
                "AmbiguousLoadBalancer: {} each have a load balancer for it",
                sources.join(", ")
            );
            verdict.reasons.push(reason);
        }
    }
    verdicts
}

/// Settles each verdict; a refused host is a diagnostic for each of its Ingresses.
pub(super) fn settle(verdicts: BTreeMap<String, HostVerdict>, diagnostics: &mut Vec<Diagnostic>) -> Vec<HostVerdict> {
    crate::shadow::verdict::settle_all(verdicts, diagnostics)
}

fn listener_names(listeners: Listeners) -> &'static [&'static str] {
    match listeners {
        Listeners::Both => &["http", "https"],
        Listeners::Plain => &["http"],
        Listeners::Tls => &["https"],
    }
}
