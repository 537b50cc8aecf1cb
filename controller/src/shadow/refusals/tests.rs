//! Which verdicts become DNS refusals, and what a refusal says.

use shunt_spec::HostMatch;

use super::*;

fn mk_verdict(host: &str, verdict: Verdict, reasons: &[&str]) -> Arc<HostVerdict> {
    Arc::new(HostVerdict {
        host: host.to_string(),
        matched: HostMatch::Exact(host.to_string()),
        ingresses: vec![format!("shop/{host}")],
        classes: ["qcloud".to_string()].into(),
        verdict,
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
        listeners: &["http"],
        certificate: None,
        ignored: Default::default(),
        no_effect: Default::default(),
    })
}

#[test]
fn only_refused_hosts_are_left_out_with_their_reasons_joined() {
    let verdicts = [
        mk_verdict("same.example.com", Verdict::Identical, &[]),
        mk_verdict(
            "odd.example.com",
            Verdict::Refused,
            &["Rewrite: unknown code", "Tls: no certificate"],
        ),
    ];
    let refusals = dns_refusals(&verdicts, ShadowRewrite::Refused);
    assert_eq!(
        refusals,
        [Refusal {
            host: HostMatch::Exact("odd.example.com".to_string()),
            reason: RefusalReason::Other {
                code: "ShadowRefused",
                detail: "Rewrite: unknown code; Tls: no certificate".to_string(),
            },
        }]
    );
    assert_eq!(
        refusals[0].to_string(),
        "odd.example.com: ShadowRefused: Rewrite: unknown code; Tls: no certificate"
    );
}

#[test]
fn rewriting_all_shadowed_hosts_refuses_none() {
    let verdicts = [mk_verdict(
        "odd.example.com",
        Verdict::Refused,
        &["Tls: no certificate"],
    )];
    assert_eq!(dns_refusals(&verdicts, ShadowRewrite::All), []);
}
