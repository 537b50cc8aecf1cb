//! The nginx profile on Ingresses as people write them: `tests/corpus/nginx`, one file per
//! public repository's manifest (annotation keys and values as found, names ours), each run
//! alone through `shunt shadow report --shadow-class nginx --json`, as an operator would run
//! it on that repository's cluster.
//!
//! The corpus holds ordinary Ingresses in proportion, not only the exotic ones. A host may be
//! refused only for a feature ingress-nginx really has and shunt does not reproduce; a refusal
//! naming a key shunt covers fails here.

use std::collections::BTreeMap;

use crate::support::corpus::{Outcome, corpus_files, report};

const CLASS: &str = "nginx";

/// Keys (after `nginx.ingress.kubernetes.io/`) a host may still be refused for: features of
/// ingress-nginx shunt does not reproduce (basic auth, TLS passthrough, the WAF).
/// Every other refusal is a defect of the profile.
const NOT_REPRODUCED: [&str; 7] = [
    "auth-type",
    "auth-secret",
    "auth-realm",
    "ssl-passthrough",
    "enable-modsecurity",
    "enable-owasp-core-rules",
    "modsecurity-snippet",
];

/// Keys the nginx profile is to reproduce and does not yet; a key leaves this list when it
/// lands, and a refusal for any other key fails the test.
const NOT_YET: [&str; 0] = [];

/// The share of host verdicts that must be identical over the corpus: 112 of 115 are (97.4 %);
/// the three refused name basic auth, ModSecurity and ssl-passthrough ([`NOT_REPRODUCED`]).
const IDENTICAL_AT_LEAST: f64 = 0.97;

/// `UnsupportedAnnotation: nginx.ingress.kubernetes.io/KEY` and friends: the key, if any.
fn refused_key(reason: &str) -> Option<&str> {
    reason.split_once(": ")?.1.strip_prefix("nginx.ingress.kubernetes.io/")
}

#[test]
fn people_s_nginx_ingresses_move_unless_they_use_a_feature_shunt_lacks() {
    let outcomes: Vec<Outcome> = corpus_files(CLASS).iter().map(|file| report(CLASS, file)).collect();
    assert!(outcomes.len() >= 100, "the corpus has {} files", outcomes.len());
    let written: usize = outcomes.iter().map(|o| o.ingresses_written).sum();
    assert!(written >= 100, "the corpus has {written} Ingresses");

    let mut identical = 0;
    let mut hosts = 0;
    let mut defects = Vec::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for outcome in &outcomes {
        for host in outcome.report["hosts"].as_array().expect("hosts") {
            hosts += 1;
            if host["verdict"] == "identical" {
                identical += 1;
                continue;
            }
            for reason in host["reasons"].as_array().expect("reasons") {
                let reason = reason.as_str().expect("text");
                *reasons.entry(reason.to_string()).or_default() += 1;
                let known = |key: &str| NOT_REPRODUCED.contains(&key) || NOT_YET.contains(&key);
                if !refused_key(reason).is_some_and(known) {
                    defects.push(format!("{}: {} refused for {reason}", outcome.file, host["host"]));
                }
            }
        }
    }
    let share = f64::from(identical) / f64::from(hosts);
    eprintln!(
        "corpus: {identical} of {hosts} hosts identical ({:.1} %)",
        share * 100.0
    );
    for (reason, count) in &reasons {
        eprintln!("  {count:3} {reason}");
    }
    assert!(
        defects.is_empty(),
        "refused for what shunt covers:\n{}",
        defects.join("\n")
    );
    assert!(share >= IDENTICAL_AT_LEAST, "{identical} of {hosts} hosts identical");
}

#[test]
fn every_nginx_ingress_of_the_corpus_is_accounted_for_in_its_report() {
    let mut missing = Vec::new();
    for outcome in corpus_files(CLASS).iter().map(|file| report(CLASS, file)) {
        let counted = outcome.report["summary"]["ingresses"].as_u64().expect("a count");
        if counted != outcome.ingresses_written as u64 {
            missing.push(format!(
                "{}: {} Ingresses written, {counted} in the report",
                outcome.file, outcome.ingresses_written
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
