//! The `/shadow` document on the admin listener and `shunt shadow report`: which profile, what
//! it assumes of the other controller, a summary a CI job can gate on, a verdict per host, and
//! the Ingresses no host verdict accounts for (catch-alls, skipped).
//!
//! ```text
//! host verdicts + Ingress verdicts ─summary (counts, reasons by kind)─▶ JSON document
//!                                  └─markdown.rs (reasons grouped by kind, fill-ins)─▶ text
//! ```

mod markdown;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Serialize, Serializer, ser::SerializeMap, ser::SerializeSeq};
use serde_json::json;

pub use self::markdown::markdown;
use super::{HostVerdict, IngressKind, IngressVerdict, Verdict};

/// What the served profiles say of themselves, and which of their classes are ours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Served {
    /// `qcloud`, `nginx` or `qcloud+nginx`.
    pub profile: String,
    pub assumed: Vec<&'static str>,
    /// Annotation keys known to change nothing a caller gets.
    pub no_effect: Vec<String>,
    /// Classes compiled with a profile but ours (`--class-profile`): their catch-alls are served.
    pub owned: BTreeSet<String>,
}

/// The counts of one compile's verdicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Every shadowed Ingress: naming a host, a catch-all or skipped.
    pub ingresses: usize,
    pub hosts: usize,
    pub identical: usize,
    pub refused: usize,
    /// Ingresses with rules no host names, or only `spec.defaultBackend`.
    pub catch_alls: usize,
    /// Ingresses the other controller serves none of.
    pub skipped: usize,
    /// `(reason, hosts refused for it)`, most hosts first, then by reason: every reason.
    pub top_reasons: Vec<(String, usize)>,
    /// `(kind, hosts refused for it)`, the kind being the text before `:`; most hosts first.
    pub reason_kinds: Vec<(String, usize)>,
}

/// The document for the `served` profiles, their hosts' `verdicts` and the `ingresses` those
/// miss.
pub fn document(served: &Served, verdicts: &[Arc<HostVerdict>], ingresses: &[IngressVerdict]) -> serde_json::Value {
    let of_kind = |kind| ingresses.iter().filter(move |entry| entry.kind == kind);
    let catch_alls: Vec<serde_json::Value> = of_kind(IngressKind::CatchAll)
        .map(|entry| catch_all(served, entry))
        .collect();
    let skipped: Vec<&IngressVerdict> = of_kind(IngressKind::Skipped).collect();
    json!({
        "profile": served.profile,
        "assumed": served.assumed,
        "noEffect": served.no_effect,
        "summary": summary(verdicts, ingresses),
        "classes": by_class(verdicts, ingresses),
        "hosts": verdicts,
        "catchAlls": catch_alls,
        "skipped": skipped,
    })
}

/// [`document`]'s text, deflated as it is written: without a `Value` of every host (~1 KB
/// each) or the whole text ever held, which at 10,000 hosts were ~12 MiB of a compile's peak.
/// Written when first read (`GET /shadow`, or a comparison of two tables whose verdicts differ):
/// at 10,000 hosts ~0.2 s that a compile's publish no longer waits for.
pub fn deferred(
    served: Served,
    verdicts: Arc<[Arc<HostVerdict>]>,
    ingresses: Arc<[IngressVerdict]>,
) -> shunt_spec::Document {
    // Its parts are `Value`s and strings, which always serialize.
    shunt_spec::Document::deferred_json(Report {
        served,
        verdicts,
        ingresses,
    })
}

/// [`document`] written part by part, from the verdicts the compile keeps anyway: its keys in
/// the order a `Value`'s map sorts them, each part a `Value` (whose keys are sorted too) of its
/// own, a list one entry at a time.
struct Report {
    served: Served,
    verdicts: Arc<[Arc<HostVerdict>]>,
    ingresses: Arc<[IngressVerdict]>,
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Report {
            served,
            verdicts,
            ingresses,
        } = self;
        let of_kind = |kind| move || ingresses.iter().filter(move |entry| entry.kind == kind);
        let catch_alls = || of_kind(IngressKind::CatchAll)().map(|entry| catch_all(served, entry));
        let mut map = serializer.serialize_map(Some(8))?;
        map.serialize_entry("assumed", &served.assumed)?;
        map.serialize_entry("catchAlls", &EachAsValue(catch_alls))?;
        map.serialize_entry("classes", &as_value(&by_class(verdicts, ingresses))?)?;
        map.serialize_entry("hosts", &EachAsValue(|| verdicts.iter()))?;
        map.serialize_entry("noEffect", &served.no_effect)?;
        map.serialize_entry("profile", &served.profile)?;
        map.serialize_entry("skipped", &EachAsValue(of_kind(IngressKind::Skipped)))?;
        map.serialize_entry("summary", &as_value(&summary(verdicts, ingresses))?)?;
        map.end()
    }
}

/// A list written as the `Value`s of its entries, one at a time.
struct EachAsValue<F>(F);

impl<F, I> Serialize for EachAsValue<F>
where
    F: Fn() -> I,
    I: Iterator<Item: Serialize>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for entry in (self.0)() {
            seq.serialize_element(&as_value(&entry)?)?;
        }
        seq.end()
    }
}

fn as_value<E: serde::ser::Error>(value: &impl Serialize) -> Result<serde_json::Value, E> {
    serde_json::to_value(value).map_err(E::custom)
}

fn catch_all(served: &Served, entry: &IngressVerdict) -> serde_json::Value {
    json!({
        "ingress": entry.ingress,
        "class": entry.class,
        "reach": reach(served, entry),
        "reasons": entry.reasons,
    })
}

/// Who reaches a catch-all's rules.
pub fn reach(served: &Served, entry: &IngressVerdict) -> &'static str {
    match (served.owned.contains(&entry.class), entry.reasons.is_empty()) {
        (true, true) => "served by shunt as the default server: any Host no other rule claims",
        (true, false) => "not served (refused): see reasons",
        (false, _) => "reachable by the load balancer's address only, not moved",
    }
}

/// A summary per shadowed class, over the hosts and Ingresses of that class.
pub fn by_class(verdicts: &[Arc<HostVerdict>], ingresses: &[IngressVerdict]) -> BTreeMap<String, Summary> {
    let classes: BTreeSet<&str> = (verdicts.iter().flat_map(|v| v.classes.iter().map(String::as_str)))
        .chain(ingresses.iter().map(|entry| entry.class.as_str()))
        .collect();
    classes
        .into_iter()
        .map(|class| {
            let hosts: Vec<Arc<HostVerdict>> = (verdicts.iter())
                .filter(|v| v.classes.iter().any(|c| c == class))
                .cloned()
                .collect();
            let entries: Vec<IngressVerdict> = (ingresses.iter())
                .filter(|entry| entry.class == class)
                .cloned()
                .collect();
            (class.to_string(), summary(&hosts, &entries))
        })
        .collect()
}

pub fn summary(verdicts: &[Arc<HostVerdict>], ingresses: &[IngressVerdict]) -> Summary {
    let sources: BTreeSet<&str> = (verdicts.iter().flat_map(|v| v.ingresses.iter().map(String::as_str)))
        .chain(ingresses.iter().map(|entry| entry.ingress.as_str()))
        .collect();
    let identical = verdicts.iter().filter(|v| v.verdict == Verdict::Identical).count();
    let count = |kind| ingresses.iter().filter(|entry| entry.kind == kind).count();
    Summary {
        ingresses: sources.len(),
        hosts: verdicts.len(),
        identical,
        refused: verdicts.len() - identical,
        catch_alls: count(IngressKind::CatchAll),
        skipped: count(IngressKind::Skipped),
        top_reasons: most_hosts_first(verdicts, |reason| reason),
        reason_kinds: most_hosts_first(verdicts, reason_kind),
    }
}

/// The kind of a reason: the text before its `:` (`CertificateUnavailable`, `TkeRejects`).
pub fn reason_kind(reason: &str) -> &str {
    reason.split_once(':').map_or(reason, |(kind, _)| kind).trim()
}

/// `(key, hosts)` for each key `key_of` gives the hosts' reasons, a host counted once per key.
fn most_hosts_first<'v>(verdicts: &'v [Arc<HostVerdict>], key_of: impl Fn(&'v str) -> &'v str) -> Vec<(String, usize)> {
    let mut hosts: BTreeMap<&str, usize> = BTreeMap::new();
    for verdict in verdicts {
        let keys: BTreeSet<&str> = verdict.reasons.iter().map(|reason| key_of(reason)).collect();
        for key in keys {
            *hosts.entry(key).or_default() += 1;
        }
    }
    let mut counted: Vec<(String, usize)> = hosts.into_iter().map(|(key, n)| (key.to_string(), n)).collect();
    counted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counted
}

/// Whether a CI gate fails: a host refused, or an Ingress skipped (the verdicts are those of
/// the classes served with a profile, and only those).
pub fn gate_fails(verdicts: &[Arc<HostVerdict>], ingresses: &[IngressVerdict]) -> bool {
    let refused = verdicts.iter().any(|v| v.verdict == Verdict::Refused);
    refused || ingresses.iter().any(|entry| entry.kind == IngressKind::Skipped)
}
