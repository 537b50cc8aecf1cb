//! The verdict per host of a shadowed Ingress, whatever its profile: identical (shunt answers
//! as the other controller would, on every port it listens on) or refused with reasons.
//! Refused hosts stay out of the CoreDNS rules.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use serde::Serialize;
use shunt_spec::HostMatch;

use super::strings::Strings;
use crate::compile::{Diagnostic, Reason};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostVerdict {
    /// As the Ingress spells it (lowercase).
    pub host: String,
    #[serde(skip)]
    pub matched: HostMatch,
    /// `namespace/name` of every shadowed Ingress naming the host.
    pub ingresses: Vec<String>,
    /// The classes of those Ingresses, sorted. Shared: the incremental compile keeps one list
    /// for every verdict of the same classes.
    pub classes: Arc<[String]>,
    pub verdict: Verdict,
    /// `Reason: detail`, sorted; empty when identical.
    pub reasons: Strings,
    /// `http`, `https`: the listeners the other controller serves the host on, sorted. A static
    /// list: every verdict is kept while its host group stands.
    pub listeners: &'static [&'static str],
    /// The Secret serving the host's HTTPS, `namespace/name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// Annotation keys on the host's Ingresses the other controller does not read (it ignores
    /// them, and so does shunt), sorted; absent when none.
    #[serde(skip_serializing_if = "Strings::is_empty")]
    pub ignored: Strings,
    /// Annotation keys it reads that change nothing a caller or pod sees, sorted; absent when none.
    #[serde(rename = "noEffect", skip_serializing_if = "Strings::is_empty")]
    pub no_effect: Strings,
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
            classes: Arc::new([]),
            verdict: Verdict::Identical,
            reasons: Strings::default(),
            listeners: &[],
            certificate: None,
            ignored: Strings::default(),
            no_effect: Strings::default(),
        }
    }

    /// Adds a listener, `http` or `https` (anything else is not a listener and is ignored).
    pub fn add_listener(&mut self, name: &str) {
        let has = |listener| self.listeners.contains(&listener) || name == listener;
        self.listeners = match (has("http"), has("https")) {
            (true, true) => &["http", "https"],
            (true, false) => &["http"],
            (false, true) => &["https"],
            (false, false) => &[],
        };
    }

    /// Settles the verdict from the reasons gathered.
    pub fn settle(&mut self) {
        self.ingresses.sort();
        self.ingresses.dedup();
        // Verdicts are kept until their host group compiles again: no growth room.
        for strings in [&mut self.reasons, &mut self.ignored, &mut self.no_effect] {
            strings.settle();
        }
        self.ingresses.shrink_to_fit();
        self.verdict = if self.reasons.is_empty() {
            Verdict::Identical
        } else {
            Verdict::Refused
        };
    }
}

/// Settles each verdict; a refused host is a diagnostic for each of its Ingresses.
pub fn settle_all(verdicts: BTreeMap<String, HostVerdict>, diagnostics: &mut Vec<Diagnostic>) -> Vec<HostVerdict> {
    let mut verdicts: Vec<HostVerdict> = verdicts.into_values().collect();
    for verdict in &mut verdicts {
        verdict.settle();
        if verdict.verdict == Verdict::Refused {
            for source in &verdict.ingresses {
                let (namespace, name) = source.split_once('/').unwrap_or(("", source));
                let message = format!(
                    "host \"{}\" keeps resolving to the load balancer: {}",
                    verdict.host,
                    verdict.reasons.join("; ")
                );
                diagnostics.push(Diagnostic::new(namespace, name, Reason::ShadowRefused, message));
            }
        }
    }
    verdicts
}

/// A shadowed Ingress the host verdicts do not account for: one with rules no host names (or
/// only `spec.defaultBackend`), or one its profile's controller serves none of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressVerdict {
    /// `namespace/name`.
    pub ingress: String,
    /// Its class, as [`HostVerdict::classes`] spell it.
    pub class: String,
    pub kind: IngressKind,
    /// `Reason: detail`, sorted: why its host-less rules are not reproduced (a catch-all), or
    /// why the other controller serves none of it (skipped).
    pub reasons: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IngressKind {
    CatchAll,
    Skipped,
}

/// What a profile's compile says: a verdict per named host, and the Ingresses those miss.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// Sorted by host.
    pub hosts: Vec<HostVerdict>,
    /// Sorted by Ingress.
    pub ingresses: Vec<IngressVerdict>,
}

// === impl IngressVerdict ===

impl IngressVerdict {
    /// A catch-all Ingress; a refused one is a diagnostic, as a refused host is.
    pub fn catch_all(source: &str, reasons: &[String], diagnostics: &mut Vec<Diagnostic>) -> Self {
        let reasons: Vec<String> = reasons.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
        if !reasons.is_empty() {
            let (namespace, name) = source.split_once('/').unwrap_or(("", source));
            let message = format!("rules without a host are not served: {}", reasons.join("; "));
            diagnostics.push(Diagnostic::new(namespace, name, Reason::ShadowRefused, message));
        }
        IngressVerdict {
            ingress: source.to_string(),
            class: String::new(),
            kind: IngressKind::CatchAll,
            reasons,
        }
    }

    /// An Ingress the other controller serves none of, for `reason`.
    pub fn skipped(source: &str, reason: String) -> Self {
        IngressVerdict {
            ingress: source.to_string(),
            class: String::new(),
            kind: IngressKind::Skipped,
            reasons: vec![reason],
        }
    }
}

/// Whether `ingress` has rules no host names, or only `spec.defaultBackend`: a catch-all.
pub fn has_catch_all(ingress: &crate::objects::Ingress) -> bool {
    let Some(spec) = ingress.spec.as_ref() else {
        return false;
    };
    let hostless = (spec.rules.iter().flatten()).any(|rule| rule.host.as_deref().unwrap_or_default().is_empty());
    hostless || spec.default_backend.is_some()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn a_verdicts_listeners_are_the_sorted_set_of_those_added(
            added in prop::collection::vec(prop::sample::select(vec!["http", "https", "tcp"]), 0..6),
        ) {
            let mut verdict = HostVerdict::new("a.example.com".into(), HostMatch::Exact("a.example.com".into()));
            for name in &added {
                verdict.add_listener(name);
            }
            let expected: BTreeSet<&str> = added.into_iter().filter(|name| *name != "tcp").collect();
            prop_assert_eq!(verdict.listeners.to_vec(), expected.into_iter().collect::<Vec<_>>());
        }
    }
}
