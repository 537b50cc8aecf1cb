//! Verdicts for each case `shunt dns check` reports: to shunt, to an L4 Service, elsewhere (with
//! the hint shunt has), not at all, and refused.

use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::dns::DnsPolicy;

const SHUNT: &str = "shunt.shunt-system.svc.cluster.local";

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 96, 0, last))
}

fn mk_probes() -> Vec<Probe> {
    let hosts: Vec<HostMatch> = ["shop.example.com", "*.apps.example.com", "*.com"]
        .iter()
        .map(|h| HostMatch::from_rule_host(h))
        .collect();
    let policy = DnsPolicy::new("cluster.local", Vec::new(), Vec::new());
    let release = "shunt-system/shunt".parse().expect("valid");
    let mut stanza = Stanza::new(&release, &policy.plan(&hosts), SHUNT);
    let db = ServiceName {
        host: HostMatch::from_rule_host("db.example.com"),
        target: "db.data.svc.cluster.local".into(),
        service: "data/db".into(),
    };
    stanza.add_services(&policy, std::slice::from_ref(&db));
    probes(&stanza, &[db], SHUNT)
}

#[test]
fn rewritten_hosts_expect_their_service_and_wildcards_are_probed_one_label_down() {
    let probes = mk_probes();
    let named: Vec<(&str, Option<&str>, bool)> = probes
        .iter()
        .map(|p| (p.name.as_str(), p.target.as_deref(), p.refusal.is_some()))
        .collect();
    assert_eq!(
        named,
        [
            ("db.example.com", Some("db.data.svc.cluster.local"), false),
            ("shop.example.com", Some(SHUNT), false),
            ("shunt-dns-check.apps.example.com", Some(SHUNT), false),
            ("shunt-dns-check.com", None, true),
        ]
    );
}

#[test]
fn each_answer_gets_its_verdict_and_line() {
    let probes = mk_probes();
    let shop = &probes[1];
    let hints = Hints::default();
    let to_shunt = verdict(shop, &[ip(50)], &Answer::Addresses(vec![ip(50)]), &hints);
    assert_eq!(to_shunt.result, Result::Shunt);
    assert_eq!(
        to_shunt.to_string(),
        format!("shop.example.com: resolves to {SHUNT} (10.96.0.50)")
    );

    let public = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 10));
    let node_local = Hints {
        node_local_unmanaged: true,
        ..Hints::default()
    };
    let elsewhere = verdict(shop, &[ip(50)], &Answer::Addresses(vec![public]), &node_local);
    assert_eq!(elsewhere.result, Result::Elsewhere);
    assert!(
        elsewhere.to_string().contains("(203.0.113.10), not to shunt."),
        "{elsewhere}"
    );
    assert!(
        elsewhere
            .why
            .as_deref()
            .is_some_and(|why| why.starts_with("node-local-dns is not managed"))
    );

    let missing_rule = Hints {
        coredns_has_rule: Some(Box::new(|_| false)),
        ..Hints::default()
    };
    let nothing = verdict(&probes[2], &[ip(50)], &Answer::Nothing, &missing_rule);
    assert_eq!(nothing.result, Result::Unresolved);
    assert!(
        nothing.to_string().starts_with(
            "*.apps.example.com (as shunt-dns-check.apps.example.com): does not resolve: not in CoreDNS's rules"
        ),
        "{nothing}"
    );

    let refused = verdict(&probes[3], &[ip(50)], &Answer::Addresses(vec![public]), &hints);
    assert_eq!(refused.result, Result::Refused);
    assert!(refused.to_string().ends_with("; resolves to 203.0.113.10"), "{refused}");
    let json = serde_json::to_value(&refused).expect("serializes");
    assert_eq!(json["result"], "refused");
    assert_eq!(json["addresses"][0], "203.0.113.10");
}
