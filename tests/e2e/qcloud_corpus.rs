//! The qcloud profile on TKE Ingresses as people write them: `tests/corpus/qcloud`, one file per
//! public source (annotation keys and values as found, names ours), each run alone through
//! `shunt shadow report --shadow-class qcloud --json`, as an operator would on that cluster.
//!
//! A host may be refused only while it waits for the operator's certificate (the CLB's is a
//! Tencent certificate id; the report says what to give) or where TKE itself rejects it (named
//! with TKE's error). Any other refusal, one naming a key of the report's `noEffect` list above
//! all, is a defect of the profile.

use serde_json::Value;

use crate::support::corpus::{Outcome, corpus_files, report};

const CLASS: &str = "qcloud";

/// Reason kinds (the text before `:`) a host may be refused for.
const EXPECTED_KINDS: [&str; 2] = ["CertificateUnavailable", "TkeRejects"];

/// The share of hosts that must be identical: 11 of 18 are (61 %); of the other seven, six wait
/// for a certificate (one of them with a TkeServiceConfig session, served as the CLB's cookie)
/// and one is TKE's E4047.
const IDENTICAL_AT_LEAST: f64 = 0.61;

/// Why `reason` is not one a host may be refused for, if it is not.
fn defect(reason: &str, no_effect: &[&str]) -> Option<String> {
    if let Some(key) = no_effect.iter().find(|key| reason.contains(*key)) {
        return Some(format!("names {key}, which changes no answer"));
    }
    let kind = reason.split_once(':').map_or(reason, |(kind, _)| kind).trim();
    let certificate_said = kind != "CertificateUnavailable" || reason.contains("--shadow-tls");
    match (EXPECTED_KINDS.contains(&kind), certificate_said) {
        (true, true) => None,
        (true, false) => Some("does not say what certificate to give".into()),
        (false, _) => Some("is not a certificate wait or a TKE rejection".into()),
    }
}

#[test]
fn people_s_tke_ingresses_move_unless_they_wait_for_a_certificate_or_tke_rejects_them() {
    let outcomes: Vec<Outcome> = corpus_files(CLASS).iter().map(|file| report(CLASS, file)).collect();
    let written: usize = outcomes.iter().map(|o| o.ingresses_written).sum();
    assert!(written >= 16, "the corpus has {written} Ingresses");
    let (mut identical, mut hosts, mut defects) = (0, 0, Vec::new());
    for outcome in &outcomes {
        let no_effect: Vec<&str> = (outcome.report["noEffect"].as_array().expect("noEffect"))
            .iter()
            .filter_map(Value::as_str)
            .filter(|key| key.contains('/'))
            .collect();
        for host in outcome.report["hosts"].as_array().expect("hosts") {
            hosts += 1;
            if host["verdict"] == "identical" {
                identical += 1;
                continue;
            }
            for reason in host["reasons"].as_array().expect("reasons") {
                let reason = reason.as_str().expect("text");
                if let Some(why) = defect(reason, &no_effect) {
                    defects.push(format!("{}: {} refused: {reason:?} {why}", outcome.file, host["host"]));
                }
            }
        }
    }
    let share = f64::from(identical) / f64::from(hosts);
    eprintln!(
        "qcloud corpus: {identical} of {hosts} hosts identical ({:.1} %)",
        share * 100.0
    );
    assert!(
        defects.is_empty(),
        "refused for what changes no answer:\n{}",
        defects.join("\n")
    );
    assert!(share >= IDENTICAL_AT_LEAST, "{identical} of {hosts} hosts identical");
}

#[test]
fn every_qcloud_ingress_of_the_corpus_is_accounted_for_in_its_report() {
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

#[test]
fn tkes_own_rejections_in_the_corpus_are_named_with_its_error() {
    let outcome = report(
        CLASS,
        &corpus_files(CLASS)
            .into_iter()
            .find(|f| f.ends_with("terraform-demo-client-ip.yaml"))
            .expect("the file"),
    );
    let hosts = outcome.report["hosts"].as_array().expect("hosts");
    let rejected = hosts
        .iter()
        .find(|h| h["host"] == "clusterip.demo.test")
        .expect("the host");
    assert_eq!(rejected["verdict"], "refused");
    assert!(
        rejected["reasons"][0]
            .as_str()
            .expect("text")
            .starts_with("TkeRejects: E4047 ")
    );
}
