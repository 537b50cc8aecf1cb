//! The shadow verdicts in the log: a summary line at start-up and whenever a verdict changes.

use std::collections::BTreeSet;

use tracing::info;

use super::{HostVerdict, Verdict};

/// Logs the verdicts unless `reported` (the publish loop's set of reported lines) holds them
/// already; returns the entry to keep in it.
pub fn log_verdicts(
    verdicts: &[HostVerdict],
    reported: &BTreeSet<(String, String, String)>,
) -> Option<(String, String, String)> {
    if verdicts.is_empty() {
        return None;
    }
    let summary = summary(verdicts);
    let entry = (String::new(), "ShadowVerdicts".to_string(), summary.clone());
    if reported.contains(&entry) {
        return Some(entry);
    }
    let identical = verdicts.iter().filter(|v| v.verdict == Verdict::Identical).count();
    info!(
        identical,
        refused = verdicts.len() - identical,
        hosts = %summary,
        "Shadow verdicts (details at the admin listener's /shadow)"
    );
    Some(entry)
}

/// `a.example.com=identical b.example.com=refused`.
pub fn summary(verdicts: &[HostVerdict]) -> String {
    let parts: Vec<String> = verdicts
        .iter()
        .map(|v| format!("{}={}", v.host, v.verdict.as_str()))
        .collect();
    parts.join(" ")
}
