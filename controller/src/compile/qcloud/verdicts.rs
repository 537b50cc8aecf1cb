//! The shadow verdict per host: identical (shunt answers as the CLB would, on every port the
//! CLB listens on) or refused with reasons. Refused hosts stay out of the CoreDNS rules.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::json;
use shunt_proxy::routes::spec::HostMatch;

/// What shunt assumes of the CLB where TKE's documentation is not precise; `/shadow` lists it.
pub const ASSUMED: [&str; 8] = [
    "paths are CLB URL rules (nginx locations): a character prefix, longest wins; pathType Exact is nginx '='",
    "a rule ending in '/' answers the same path without it with 301 to the rule",
    "a wildcard '*.domain' matches any number of labels; an exact domain beats it",
    "a request for a known domain that no rule matches gets 404; an unknown domain goes to the default domain (host-less rules)",
    "auto-rewrite without auto-rewrite-code redirects with the --shadow-rewrite-code default (302)",
    "redirects keep the query string",
    "X-Client-Proto is http or https by listener; X-Forwarded-For/-Proto as shunt always sets them; X-Real-IP is not sent",
    "a port the CLB does not listen on gets 404 from shunt instead of a refused connection",
];

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostVerdict {
    /// As the Ingress spells it (lowercase).
    pub host: String,
    #[serde(skip)]
    pub matched: HostMatch,
    /// `namespace/name` of every qcloud Ingress naming the host.
    pub ingresses: Vec<String>,
    pub verdict: Verdict,
    /// `Reason: detail`, sorted; empty when identical.
    pub reasons: Vec<String>,
    /// `http`, `https`: the CLB listeners the host has rules on.
    pub listeners: Vec<&'static str>,
    /// The Secret serving the host's HTTPS, `namespace/name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Identical,
    Refused,
}

// === impl Verdict ===

impl Verdict {
    pub const ALL: [Verdict; 2] = [Verdict::Identical, Verdict::Refused];

    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::Refused => "refused",
        }
    }
}

// === impl HostVerdict ===

impl HostVerdict {
    pub fn new(host: String, matched: HostMatch) -> Self {
        HostVerdict {
            host,
            matched,
            ingresses: Vec::new(),
            verdict: Verdict::Identical,
            reasons: Vec::new(),
            listeners: Vec::new(),
            certificate: None,
        }
    }

    /// Settles the verdict from the reasons gathered.
    pub fn settle(&mut self) {
        let reasons: BTreeSet<String> = self.reasons.drain(..).collect();
        self.reasons = reasons.into_iter().collect();
        self.ingresses.sort();
        self.ingresses.dedup();
        self.verdict = if self.reasons.is_empty() {
            Verdict::Identical
        } else {
            Verdict::Refused
        };
    }
}

/// The `/shadow` document: the profile, what it assumes, a verdict per host.
pub fn document(verdicts: &[HostVerdict]) -> serde_json::Value {
    json!({
        "profile": "qcloud",
        "assumed": ASSUMED,
        "hosts": verdicts,
    })
}

/// The hosts to leave out of the CoreDNS rules, with why (each reason joined), unless
/// `rewrite_all` (`--shadow-rewrite=all`) asks for every served host.
pub fn dns_refusals(verdicts: &[HostVerdict], rewrite_all: bool) -> Vec<(HostMatch, String)> {
    if rewrite_all {
        return Vec::new();
    }
    verdicts
        .iter()
        .filter(|v| v.verdict == Verdict::Refused)
        .map(|v| (v.matched.clone(), v.reasons.join("; ")))
        .collect()
}
