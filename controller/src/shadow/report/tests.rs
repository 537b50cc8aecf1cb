use shunt_spec::HostMatch;

use super::*;

fn mk_verdict(host: &str, ingresses: &[&str], reasons: &[&str]) -> Arc<HostVerdict> {
    let mut verdict = HostVerdict::new(host.to_string(), HostMatch::Exact(host.to_string()));
    verdict.ingresses = ingresses.iter().map(|s| s.to_string()).collect();
    verdict.classes = ["nginx".to_string()].into();
    verdict.reasons = reasons.iter().map(|s| s.to_string()).collect();
    verdict.settle();
    Arc::new(verdict)
}

fn mk_verdicts() -> Vec<Arc<HostVerdict>> {
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

fn mk_entry(ingress: &str, class: &str, kind: IngressKind, reasons: &[&str]) -> IngressVerdict {
    IngressVerdict {
        ingress: ingress.to_string(),
        class: class.to_string(),
        kind,
        reasons: reasons.iter().map(|s| s.to_string()).collect(),
    }
}

fn mk_entries() -> Vec<IngressVerdict> {
    vec![
        mk_entry("shop/any", "nginx", IngressKind::CatchAll, &[]),
        mk_entry(
            "shop/snippet",
            "nginx",
            IngressKind::Skipped,
            &["SnippetRejected: x/server-snippet"],
        ),
    ]
}

fn mk_served() -> Served {
    Served {
        profile: "nginx".to_string(),
        assumed: vec!["assumed"],
        ..Served::default()
    }
}

#[test]
fn the_summary_counts_every_ingress_hosts_and_every_reason_most_hosts_first() {
    assert_eq!(
        summary(&mk_verdicts(), &mk_entries()),
        Summary {
            ingresses: 5,
            hosts: 3,
            identical: 1,
            refused: 2,
            catch_alls: 1,
            skipped: 1,
            top_reasons: vec![
                ("UnsupportedAnnotation: x/auth-url".to_string(), 2),
                ("Conflict: path /".to_string(), 1),
            ],
            reason_kinds: vec![("UnsupportedAnnotation".to_string(), 2), ("Conflict".to_string(), 1)],
        }
    );
}

#[test]
fn the_markdown_report_has_the_counts_and_a_row_per_host() {
    let text = markdown(&mk_served(), &mk_verdicts(), &[]);
    assert!(
        text.starts_with(
            "# Shadow report: nginx\n\n3 Ingresses, 3 hosts: 1 identical, 2 refused; 0 catch-alls, 0 skipped\n"
        ),
        "{text}"
    );
    assert!(text.contains("\n### UnsupportedAnnotation (2 hosts)\n\n- b.example.com (shop/a, shop/b): x/auth-url\n- c.example.com (shop/c): x/auth-url\n"), "{text}");
    assert!(text.contains("| a.example.com | identical | shop/a |  |\n"));
    assert!(
        text.contains("| c.example.com | refused | shop/c | Conflict: path /; UnsupportedAnnotation: x/auth-url |\n")
    );
}

#[test]
fn reasons_of_one_kind_are_one_group_with_every_host_and_the_certificate_fill_ins() {
    let verdicts: Vec<Arc<HostVerdict>> = (0..12)
        .map(|i| {
            let host = format!("h{i:02}.example.com");
            let reason = format!("CertificateUnavailable: no certificate for \"{host}\"");
            mk_verdict(&host, &[&format!("shop/i{i:02}")], &[&reason])
        })
        .collect();
    let text = markdown(&mk_served(), &verdicts, &[]);
    assert_eq!(text.matches("### ").count(), 1, "{text}");
    assert!(text.contains("### CertificateUnavailable (12 hosts)"), "{text}");
    for i in 0..12 {
        assert!(
            text.contains(&format!("--shadow-tls h{i:02}.example.com=NAMESPACE/SECRET\n")),
            "{text}"
        );
        assert!(text.contains(&format!(
            "kubectl -n shop annotate ingress i{i:02} shunt.dev/tls-secret=SECRET\n"
        )));
    }
    assert_eq!(
        summary(&verdicts, &[]).top_reasons.len(),
        12,
        "every reason, not the top ten"
    );
}

#[test]
fn catch_alls_and_skipped_ingresses_are_listed_and_counted() {
    let mut served = mk_served();
    let document = document(&served, &mk_verdicts(), &mk_entries());
    assert_eq!(document["summary"]["catch_alls"], 1);
    assert_eq!(document["summary"]["skipped"], 1);
    assert_eq!(document["summary"]["ingresses"], 5);
    assert_eq!(document["catchAlls"][0]["ingress"], "shop/any");
    assert_eq!(
        document["catchAlls"][0]["reach"],
        "reachable by the load balancer's address only, not moved"
    );
    assert_eq!(
        document["skipped"][0]["reasons"][0],
        "SnippetRejected: x/server-snippet"
    );
    served.owned.insert("nginx".to_string());
    let text = markdown(&served, &[], &mk_entries());
    assert!(
        text.contains(
            "| shop/any | nginx | served by shunt as the default server: any Host no other rule claims |  |\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("| shop/snippet | nginx | SnippetRejected: x/server-snippet |\n"),
        "{text}"
    );
}

#[test]
fn the_gate_fails_on_a_refused_host_or_a_skipped_ingress_only() {
    let identical = [mk_verdict("a.example.com", &["shop/a"], &[])];
    let catch_all = [mk_entry("shop/any", "nginx", IngressKind::CatchAll, &[])];
    assert!(!gate_fails(&identical, &catch_all));
    assert!(gate_fails(&mk_verdicts(), &[]));
    assert!(gate_fails(&identical, &mk_entries()));
}

#[test]
fn the_document_carries_the_summary() {
    let document = document(&mk_served(), &mk_verdicts(), &[]);
    assert_eq!(document["summary"]["refused"], 2);
    assert_eq!(document["hosts"].as_array().map(Vec::len), Some(3));
}

#[test]
fn each_class_gets_a_summary_of_the_hosts_its_ingresses_name() {
    let mut verdicts = mk_verdicts();
    Arc::make_mut(&mut verdicts[2]).classes = ["internal".to_string()].into();
    let classes = by_class(&verdicts, &[]);
    assert_eq!(classes.keys().collect::<Vec<_>>(), ["internal", "nginx"]);
    assert_eq!((classes["nginx"].hosts, classes["nginx"].refused), (2, 1));
    assert_eq!((classes["internal"].hosts, classes["internal"].identical), (1, 0));
    let document = document(&mk_served(), &verdicts, &[]);
    assert_eq!(document["classes"]["internal"]["refused"], 1);
    let text = markdown(&mk_served(), &verdicts, &[]);
    assert!(
        text.contains("| internal | 1 | 1 | 0 | 1 | 0 | 0 | Conflict: path / |\n"),
        "{text}"
    );
}

/// The text `/shadow` serves, written part by part, is the document's indented text.
fn assert_deflated_is_the_documents_text(served: &Served, verdicts: &[Arc<HostVerdict>], entries: &[IngressVerdict]) {
    let text = serde_json::to_string_pretty(&document(served, verdicts, entries)).expect("a Value serializes");
    let kept = deferred(served.clone(), verdicts.into(), entries.into());
    assert!(!kept.is_written(), "written when first read");
    assert_eq!(kept.text(), text);
}

#[test]
fn the_kept_document_is_the_documents_text() {
    let mut served = mk_served();
    served.no_effect = vec!["x/ssl-redirect".to_string()];
    served.owned.insert("nginx".to_string());
    assert_deflated_is_the_documents_text(&served, &mk_verdicts(), &mk_entries());
    assert_deflated_is_the_documents_text(&served, &[], &[]);
}

proptest::proptest! {
    #[test]
    fn the_kept_document_is_the_documents_text_for_any_verdicts(
        hosts in proptest::collection::vec(("[a-c]{1,3}", proptest::collection::vec("[a-c/]{1,4}", 0..3), proptest::collection::vec("[A-C]{1,2}: [\"x]{0,3}", 0..3)), 0..6),
        entries in proptest::collection::vec(("[a-c/]{1,4}", "[a-c]{1,2}", proptest::bool::ANY, proptest::collection::vec("[A-C]: [a-c]", 0..2)), 0..4),
        certificate in proptest::option::of("[a-c/]{1,4}"),
    ) {
        let verdicts: Vec<Arc<HostVerdict>> = hosts
            .iter()
            .map(|(host, ingresses, reasons)| {
                let ingresses: Vec<&str> = ingresses.iter().map(String::as_str).collect();
                let reasons: Vec<&str> = reasons.iter().map(String::as_str).collect();
                let mut verdict = mk_verdict(host, &ingresses, &reasons);
                let edit = Arc::make_mut(&mut verdict);
                edit.certificate = certificate.clone();
                edit.add_listener("https");
                verdict
            })
            .collect();
        let entries: Vec<IngressVerdict> = entries
            .iter()
            .map(|(ingress, class, catch_all, reasons)| {
                let kind = if *catch_all { IngressKind::CatchAll } else { IngressKind::Skipped };
                let reasons: Vec<&str> = reasons.iter().map(String::as_str).collect();
                mk_entry(ingress, class, kind, &reasons)
            })
            .collect();
        assert_deflated_is_the_documents_text(&mk_served(), &verdicts, &entries);
    }
}
