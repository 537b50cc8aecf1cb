//! The shadow verdicts in the log: a summary line at start-up and whenever a verdict changes.

use std::sync::Arc;

use std::{
    collections::BTreeSet,
    hash::{DefaultHasher, Hash, Hasher},
};

use tracing::info;

use super::{HostVerdict, Verdict};

/// How many refused hosts the line names; the rest are counted (`/shadow` lists them all). At
/// 10k hosts a line naming every host took ~300 KB, and the log's formatting buffer kept that.
const HOSTS_NAMED: usize = 20;

/// Logs the verdicts, which the admin listener lists at `/{document}`, unless `reported` (the
/// publish loop's set of reported lines) holds them already; returns the entry to keep in it: a
/// digest of every host's verdict, not their list.
pub fn log_verdicts(
    verdicts: &[Arc<HostVerdict>],
    document: &'static str,
    reported: &BTreeSet<(String, String, String)>,
) -> Option<(String, String, String)> {
    if verdicts.is_empty() {
        return None;
    }
    let entry = (document.to_string(), "ShadowVerdicts".to_string(), digest(verdicts));
    if reported.contains(&entry) {
        return Some(entry);
    }
    let identical = verdicts.iter().filter(|v| v.verdict == Verdict::Identical).count();
    info!(
        identical,
        refused = verdicts.len() - identical,
        refused_hosts = %refused_hosts(verdicts),
        "Shadow verdicts (details at the admin listener's /{document})"
    );
    Some(entry)
}

/// Changes whenever a host comes, goes or changes its verdict.
fn digest(verdicts: &[Arc<HostVerdict>]) -> String {
    let mut hasher = DefaultHasher::new();
    for verdict in verdicts {
        (&verdict.host, verdict.verdict).hash(&mut hasher);
    }
    format!("{}:{:016x}", verdicts.len(), hasher.finish())
}

/// `a.example.com b.example.com (and 3 more)`: the first refused hosts.
fn refused_hosts(verdicts: &[Arc<HostVerdict>]) -> String {
    let mut refused = verdicts.iter().filter(|v| v.verdict == Verdict::Refused);
    let named: Vec<&str> = refused.by_ref().take(HOSTS_NAMED).map(|v| v.host.as_str()).collect();
    let more = refused.count();
    let mut out = named.join(" ");
    if more > 0 {
        out.push_str(&format!(" (and {more} more)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use shunt_spec::HostMatch;

    use super::*;

    fn verdicts(refused: usize, identical: usize) -> Vec<Arc<HostVerdict>> {
        (0..refused + identical)
            .map(|i| {
                let host = format!("h{i:03}.example.com");
                let mut verdict = HostVerdict::new(host.clone(), HostMatch::Exact(host));
                if i < refused {
                    verdict.verdict = Verdict::Refused;
                }
                Arc::new(verdict)
            })
            .collect()
    }

    #[test]
    fn the_line_names_a_bounded_number_of_refused_hosts() {
        assert_eq!(refused_hosts(&verdicts(2, 5)), "h000.example.com h001.example.com");
        let many = refused_hosts(&verdicts(HOSTS_NAMED + 3, 100));
        assert!(many.ends_with("h019.example.com (and 3 more)"), "{many}");
        assert!(!many.contains("h020"), "{many}");
    }

    #[test]
    fn a_changed_verdict_is_reported_again_and_an_unchanged_one_is_not() {
        let before = verdicts(1, 3);
        let entry = log_verdicts(&before, "shadow", &BTreeSet::new()).unwrap();
        let reported = BTreeSet::from([entry.clone()]);
        assert_eq!(log_verdicts(&verdicts(1, 3), "shadow", &reported), Some(entry.clone()));
        let mut after = verdicts(1, 3);
        Arc::make_mut(&mut after[2]).verdict = Verdict::Refused;
        assert_ne!(log_verdicts(&after, "shadow", &reported), Some(entry.clone()));
        assert_ne!(log_verdicts(&verdicts(1, 4), "shadow", &reported), Some(entry));
    }
}
