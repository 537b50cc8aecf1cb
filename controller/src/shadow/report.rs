//! The `/shadow` document on the admin listener and `shunt shadow report`: which profile, what
//! it assumes of the other controller, a summary a CI job can gate on, and a verdict per host.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::json;

use super::{HostVerdict, Verdict};

/// How many reasons the summary lists, most hosts first.
const TOP_REASONS: usize = 10;

/// The counts of one compile's verdicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Shadowed Ingresses naming at least one host.
    pub ingresses: usize,
    pub hosts: usize,
    pub identical: usize,
    pub refused: usize,
    /// `(reason, hosts refused for it)`, most hosts first, then by reason.
    pub top_reasons: Vec<(String, usize)>,
}

/// The document for `profile`, its `assumed` behaviours and its hosts' `verdicts`.
pub fn document(profile: &str, assumed: &[&str], verdicts: &[HostVerdict]) -> serde_json::Value {
    json!({
        "profile": profile,
        "assumed": assumed,
        "summary": summary(verdicts),
        "classes": by_class(verdicts),
        "hosts": verdicts,
    })
}

/// A summary per shadowed class, over the hosts its Ingresses name.
pub fn by_class(verdicts: &[HostVerdict]) -> BTreeMap<String, Summary> {
    let classes: BTreeSet<&str> = verdicts
        .iter()
        .flat_map(|v| v.classes.iter().map(String::as_str))
        .collect();
    classes
        .into_iter()
        .map(|class| {
            let of_class: Vec<HostVerdict> = verdicts
                .iter()
                .filter(|v| v.classes.iter().any(|c| c == class))
                .cloned()
                .collect();
            (class.to_string(), summary(&of_class))
        })
        .collect()
}

pub fn summary(verdicts: &[HostVerdict]) -> Summary {
    let ingresses: BTreeSet<&str> = verdicts
        .iter()
        .flat_map(|v| v.ingresses.iter().map(String::as_str))
        .collect();
    let identical = verdicts.iter().filter(|v| v.verdict == Verdict::Identical).count();
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for reason in verdicts.iter().flat_map(|v| &v.reasons) {
        *by_reason.entry(reason.as_str()).or_default() += 1;
    }
    let mut top_reasons: Vec<(String, usize)> = by_reason
        .into_iter()
        .map(|(reason, hosts)| (reason.to_string(), hosts))
        .collect();
    top_reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top_reasons.truncate(TOP_REASONS);
    Summary {
        ingresses: ingresses.len(),
        hosts: verdicts.len(),
        identical,
        refused: verdicts.len() - identical,
        top_reasons,
    }
}

/// The Markdown report: the summary, the top reasons, then a line per host.
pub fn markdown(profile: &str, verdicts: &[HostVerdict]) -> String {
    let summary = summary(verdicts);
    let mut out = format!(
        "# Shadow report: {profile}\n\n{} Ingresses, {} hosts: {} identical, {} refused\n",
        summary.ingresses, summary.hosts, summary.identical, summary.refused
    );
    let classes = by_class(verdicts);
    if classes.len() > 1 {
        out.push_str("\n## By class\n\n| class | Ingresses | hosts | identical | refused | most common refusal |\n|---|---:|---:|---:|---:|---|\n");
        for (class, summary) in &classes {
            let top = summary.top_reasons.first().map_or("", |(reason, _)| reason.as_str());
            out.push_str(&format!(
                "| {class} | {} | {} | {} | {} | {} |\n",
                summary.ingresses,
                summary.hosts,
                summary.identical,
                summary.refused,
                top.replace('|', "\\|")
            ));
        }
    }
    if !summary.top_reasons.is_empty() {
        out.push_str("\n## Most common refusals\n\n| hosts | reason |\n|---:|---|\n");
        for (reason, hosts) in &summary.top_reasons {
            out.push_str(&format!("| {hosts} | {} |\n", reason.replace('|', "\\|")));
        }
    }
    out.push_str("\n## Hosts\n\n| host | verdict | Ingresses | reasons |\n|---|---|---|---|\n");
    for verdict in verdicts {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            verdict.host,
            verdict.verdict.as_str(),
            verdict.ingresses.join(", "),
            verdict.reasons.join("; ").replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests;

/// A report as the table keeps it and `/shadow` serves it: indented JSON text.
pub fn text(report: &serde_json::Value) -> std::sync::Arc<str> {
    // A `Value` always serializes: its map keys are strings.
    serde_json::to_string_pretty(report).unwrap_or_default().into()
}
