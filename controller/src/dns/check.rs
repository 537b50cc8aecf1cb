//! `shunt dns check`'s verdicts: what each host shunt serves (or refused) should resolve to, what
//! the pod's resolver said, and why a rewritten host does not reach shunt when shunt can tell.
//! No I/O here: `cmd/dns/check.rs` resolves and prints.

use std::{fmt, net::IpAddr};

use serde::Serialize;
use shunt_spec::HostMatch;

use super::{policy::Refusal, services::ServiceName, stanza::Stanza};

/// The label a wildcard is probed with: any one label would do, this one says who asked.
pub const PROBE_LABEL: &str = "shunt-dns-check";

/// One host to resolve and what it should resolve to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub host: HostMatch,
    /// The name queried (a wildcard's probe name).
    pub name: String,
    /// The Service name the rules answer with; `None` for a refused host.
    pub target: Option<String>,
    pub refusal: Option<String>,
}

/// What the pod's resolver said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Addresses(Vec<IpAddr>),
    /// No candidate had an address (NXDOMAIN or NODATA everywhere).
    Nothing,
    /// No nameserver answered.
    Failed(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Result {
    Shunt,
    Elsewhere,
    Unresolved,
    Refused,
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub host: String,
    pub name: String,
    pub result: Result,
    /// The Service the rules answer with (shunt's, or an L4 Service's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    pub addresses: Vec<IpAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What shunt knows about where a name goes wrong.
#[derive(Default)]
pub struct Hints {
    /// node-local-dns runs and its Corefile has no shunt block (or misses the zone).
    pub node_local_unmanaged: bool,
    /// The pod's first nameserver is node-local-dns's link-local address.
    pub via_node_local: bool,
    /// The CoreDNS Corefile as read, when readable: whether it carries the host's rule.
    #[allow(clippy::type_complexity, reason = "one predicate, said once")]
    pub coredns_has_rule: Option<Box<dyn Fn(&HostMatch) -> bool + Send + Sync>>,
}

/// Every rewritten host (with the Service it answers with) and every refused one, in order.
pub fn probes(stanza: &Stanza, services: &[ServiceName], shunt_target: &str) -> Vec<Probe> {
    let rewritten = stanza.hosts().iter().map(|host| Probe {
        host: host.clone(),
        name: probe_name(host),
        target: Some(
            services
                .iter()
                .find(|name| name.host == *host)
                .map_or(shunt_target, |name| name.target.as_str())
                .to_string(),
        ),
        refusal: None,
    });
    let refused = stanza.refused().iter().map(|Refusal { host, reason }| Probe {
        host: host.clone(),
        name: probe_name(host),
        target: None,
        refusal: Some(reason.to_string()),
    });
    rewritten.chain(refused).collect()
}

fn probe_name(host: &HostMatch) -> String {
    match host {
        HostMatch::Exact(name) => name.clone(),
        HostMatch::Wildcard(suffix) | HostMatch::DeepWildcard(suffix) => format!("{PROBE_LABEL}.{suffix}"),
        HostMatch::Any => String::new(),
    }
}

/// The verdict on one probe, given the target's addresses and the host's answer.
pub fn verdict(probe: &Probe, expected: &[IpAddr], answer: &Answer, hints: &Hints) -> Verdict {
    let addresses = match answer {
        Answer::Addresses(addresses) => addresses.clone(),
        _ => Vec::new(),
    };
    let (result, why) = match (&probe.refusal, answer) {
        (Some(reason), _) => (Result::Refused, Some(reason.clone())),
        (None, Answer::Addresses(got)) if !expected.is_empty() && got.iter().all(|ip| expected.contains(ip)) => {
            (Result::Shunt, None)
        }
        (None, Answer::Addresses(_)) => (Result::Elsewhere, Some(why_not(probe, expected, hints))),
        (None, Answer::Nothing) => (Result::Unresolved, Some(why_not(probe, expected, hints))),
        (None, Answer::Failed(error)) => (Result::Unresolved, Some(error.clone())),
    };
    Verdict {
        host: probe.host.to_string(),
        name: probe.name.clone(),
        result,
        service: probe.target.clone(),
        addresses,
        why,
    }
}

fn why_not(probe: &Probe, expected: &[IpAddr], hints: &Hints) -> String {
    if expected.is_empty() {
        let target = probe.target.as_deref().unwrap_or_default();
        return format!("the Service name {target} itself does not resolve here");
    }
    if let Some(has_rule) = &hints.coredns_has_rule
        && !has_rule(&probe.host)
    {
        return "not in CoreDNS's rules yet (shunt dns prints them; --manage-coredns writes them)".to_string();
    }
    if hints.node_local_unmanaged {
        return "node-local-dns is not managed: its Corefile sends this name upstream, past CoreDNS's rules"
            .to_string();
    }
    if hints.via_node_local {
        return "asked through node-local-dns (169.254.20.10): is shunt's block in its Corefile?".to_string();
    }
    "CoreDNS has not loaded the rules yet (reload checks every 30 s), or a cache still holds the old answer".to_string()
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addresses: Vec<String> = self.addresses.iter().map(IpAddr::to_string).collect();
        let addresses = addresses.join(", ");
        write!(f, "{}", self.host)?;
        if self.name != self.host {
            write!(f, " (as {})", self.name)?;
        }
        let service = self.service.as_deref().unwrap_or_default();
        let why = self.why.as_deref().unwrap_or_default();
        match self.result {
            Result::Shunt => write!(f, ": resolves to {service} ({addresses})"),
            Result::Elsewhere => write!(f, ": resolves elsewhere ({addresses}), not to {service}: {why}"),
            Result::Unresolved => write!(f, ": does not resolve: {why}"),
            Result::Refused if addresses.is_empty() => write!(f, ": refused ({why}); does not resolve"),
            Result::Refused => write!(f, ": refused ({why}); resolves to {addresses}"),
        }
    }
}

#[cfg(test)]
mod tests;
