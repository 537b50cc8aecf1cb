use shunt_spec::HostMatch;

use super::*;

fn mk_verdict(host: &str, ingresses: &[&str], reasons: &[&str]) -> HostVerdict {
    let mut verdict = HostVerdict::new(host.to_string(), HostMatch::Exact(host.to_string()));
    verdict.ingresses = ingresses.iter().map(|s| s.to_string()).collect();
    verdict.classes = vec!["nginx".to_string()];
    verdict.reasons = reasons.iter().map(|s| s.to_string()).collect();
    verdict.settle();
    verdict
}

fn mk_verdicts() -> Vec<HostVerdict> {
    vec![
        mk_verdict("a.example.com", &["shop/a"], &[]),
        mk_verdict(
            "b.example.com",
            &["shop/a", "shop/b"],
            &["UnsupportedAnnotation: x/auth-url"],
        ),
        mk_verdict(
            "c.example.com",
            &["shop/c"],
            &["UnsupportedAnnotation: x/auth-url", "Conflict: path /"],
        ),
    ]
}

#[test]
fn the_summary_counts_ingresses_hosts_and_the_reasons_most_hosts_share_first() {
    assert_eq!(
        summary(&mk_verdicts()),
        Summary {
            ingresses: 3,
            hosts: 3,
            identical: 1,
            refused: 2,
            top_reasons: vec![
                ("UnsupportedAnnotation: x/auth-url".to_string(), 2),
                ("Conflict: path /".to_string(), 1),
            ],
        }
    );
}

#[test]
fn the_markdown_report_has_the_counts_and_a_row_per_host() {
    let text = markdown("nginx", &mk_verdicts());
    assert!(text.starts_with("# Shadow report: nginx\n\n3 Ingresses, 3 hosts: 1 identical, 2 refused\n"));
    assert!(text.contains("| 2 | UnsupportedAnnotation: x/auth-url |\n"));
    assert!(text.contains("| a.example.com | identical | shop/a |  |\n"));
    assert!(
        text.contains("| c.example.com | refused | shop/c | Conflict: path /; UnsupportedAnnotation: x/auth-url |\n")
    );
}

#[test]
fn the_document_carries_the_summary() {
    let document = document("nginx", &["assumed"], &mk_verdicts());
    assert_eq!(document["summary"]["refused"], 2);
    assert_eq!(document["hosts"].as_array().map(Vec::len), Some(3));
}

#[test]
fn each_class_gets_a_summary_of_the_hosts_its_ingresses_name() {
    let mut verdicts = mk_verdicts();
    verdicts[2].classes = vec!["internal".to_string()];
    let classes = by_class(&verdicts);
    assert_eq!(classes.keys().collect::<Vec<_>>(), ["internal", "nginx"]);
    assert_eq!((classes["nginx"].hosts, classes["nginx"].refused), (2, 1));
    assert_eq!((classes["internal"].hosts, classes["internal"].identical), (1, 0));
    let document = document("nginx", &[], &verdicts);
    assert_eq!(document["classes"]["internal"]["refused"], 1);
    let text = markdown("nginx", &verdicts);
    assert!(
        text.contains("| internal | 1 | 1 | 0 | 1 | Conflict: path / |\n"),
        "{text}"
    );
}
