//! The rewrite policy: what a shared cluster must never let an Ingress capture, and properties
//! over generated hosts.

use proptest::prelude::*;

use super::*;

fn host(name: &str) -> HostMatch {
    parse_host(name).expect("a valid host")
}

fn mk_policy(cluster_domain: &str, domains: &[&str]) -> DnsPolicy {
    let domains = domains.iter().map(|d| d.parse().expect("a valid domain")).collect();
    DnsPolicy::new(cluster_domain, domains, Vec::new())
}

/// The plan for one host: no rewrite and one refusal (returned), or a panic.
fn refused_alone(policy: &DnsPolicy, name: &str) -> RefusalReason {
    let plan = policy.plan(&[host(name)]);
    assert_eq!(plan.rewrite, Vec::<HostMatch>::new(), "{name} must not be rewritten");
    assert_eq!(plan.refused.len(), 1, "{name}: one refusal");
    assert_eq!(plan.refused[0].host, host(name));
    plan.refused[0].reason.clone()
}

#[test]
fn names_the_cluster_answers_and_public_suffixes_are_refused_once_each() {
    let policy = mk_policy("cluster.local", &[]);
    let cases = [
        ("*.com", "a wildcard directly under the public suffix com"),
        ("*.co.uk", "a wildcard directly under the public suffix co.uk"),
        ("co.uk", "co.uk is a public suffix"),
        ("*.github.io", "a wildcard directly under the public suffix github.io"),
        (
            "kubernetes.default.svc.cluster.local",
            "in the cluster domain cluster.local, which CoreDNS answers itself",
        ),
        (
            "*.svc.cluster.local",
            "in the cluster domain cluster.local, which CoreDNS answers itself",
        ),
        (
            "payments.prod.svc.cluster.local",
            "in the cluster domain cluster.local, which CoreDNS answers itself",
        ),
        ("1.0.0.10.in-addr.arpa", "in the reverse-lookup zone in-addr.arpa"),
        ("*.ip6.arpa", "in the reverse-lookup zone ip6.arpa"),
    ];
    for (name, why) in cases {
        assert_eq!(refused_alone(&policy, name).to_string(), why, "{name}");
    }
}

#[test]
fn any_depth_wildcards_are_refused_over_public_suffixes_and_above_cluster_zones() {
    let policy = mk_policy("corp.example.net", &[]);
    let deep = |suffix: &str| HostMatch::DeepWildcard(suffix.into());
    for (suffix, refused) in [
        ("com", true),
        ("co.uk", true),
        ("example.net", true),
        ("net", true),
        ("svc.corp.example.net", true),
        ("apps.example.com", false),
    ] {
        let plan = policy.plan(&[deep(suffix)]);
        assert_eq!(plan.refused.len(), usize::from(refused), "**.{suffix}: {plan:?}");
        assert_eq!(plan.rewrite.is_empty(), refused, "**.{suffix}: {plan:?}");
    }
}

#[test]
fn a_custom_cluster_domain_is_protected_and_so_is_cluster_local() {
    let policy = mk_policy("corp.example.net", &[]);
    for name in [
        "x.corp.example.net",
        "corp.example.net",
        "*.corp.example.net",
        "x.cluster.local",
    ] {
        assert!(
            matches!(refused_alone(&policy, name), RefusalReason::ClusterZone { .. }),
            "{name}"
        );
    }
    // `*.example.net` would also rewrite `corp.example.net` itself.
    assert_eq!(
        refused_alone(&policy, "*.example.net").to_string(),
        "in the cluster domain corp.example.net, which CoreDNS answers itself"
    );
    assert_eq!(policy.plan(&[host("x.corp2.example.net")]).refused, []);
}

#[test]
fn zones_of_the_corefiles_kubernetes_plugin_are_protected() {
    let policy = mk_policy("cluster.local", &[]).with_kubernetes_zones(&["k8s.internal.example.com".into()]);
    assert_eq!(
        refused_alone(&policy, "api.k8s.internal.example.com").to_string(),
        "in zone k8s.internal.example.com, served by the Corefile's kubernetes plugin"
    );
    assert_eq!(
        policy.plan(&[host("shop.example.com")]).rewrite,
        [host("shop.example.com")]
    );
}

#[test]
fn dns_domains_let_through_only_hosts_under_them() {
    let policy = mk_policy("cluster.local", &["example.com"]);
    let plan = policy.plan(&[
        host("shop.example.com"),
        host("*.apps.example.com"),
        host("shop.example.org"),
        host("example.com"),
        host("notexample.com"),
    ]);
    assert_eq!(
        plan.rewrite,
        [
            host("example.com"),
            host("shop.example.com"),
            host("*.apps.example.com")
        ]
    );
    let refused: Vec<String> = plan.refused.iter().map(ToString::to_string).collect();
    assert_eq!(
        refused,
        [
            "notexample.com: not under a --dns-domain (example.com)",
            "shop.example.org: not under a --dns-domain (example.com)",
        ]
    );
}

#[test]
fn excluded_hosts_are_refused_with_the_pattern_that_excludes_them() {
    let exclude = vec!["*.legacy.example.com".parse().expect("valid")];
    let policy = DnsPolicy::new("cluster.local", Vec::new(), exclude);
    assert_eq!(
        refused_alone(&policy, "a.legacy.example.com").to_string(),
        "excluded by --dns-exclude *.legacy.example.com"
    );
}

#[test]
fn other_parts_of_shunt_refuse_through_the_same_plan() {
    let policy = mk_policy("cluster.local", &[]);
    let mut plan = policy.plan(&[host("a.example.com"), host("b.example.com")]);
    let reason = RefusalReason::Other {
        code: "CertificateUnavailable",
        detail: "no certificate for the host".into(),
    };
    plan.refuse(host("b.example.com"), reason.clone());
    plan.refuse(host("b.example.com"), reason);
    assert_eq!(plan.rewrite, [host("a.example.com")]);
    assert_eq!(
        plan.refused.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["b.example.com: CertificateUnavailable: no certificate for the host"]
    );
}

#[test]
fn bad_domains_and_cluster_domains_are_refused_with_a_reason() {
    for bad in ["", "*.example.com", "exa mple.com", "a..b", "10.0.0.1"] {
        assert!(bad.parse::<DnsDomain>().is_err(), "{bad:?}");
    }
    assert_eq!(parse_cluster_domain("Cluster.Local."), Ok("cluster.local".to_string()));
    assert!(parse_cluster_domain("cluster local").is_err());
}

// === properties ===

fn mk_label() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?"
}

fn mk_name(suffix: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(mk_label(), 0..4).prop_map(move |labels| {
        labels
            .into_iter()
            .chain(std::iter::once(suffix.to_string()))
            .collect::<Vec<_>>()
            .join(".")
    })
}

/// Hosts of every kind: under protected zones, public suffixes, ordinary names, wildcards.
fn mk_host() -> impl Strategy<Value = HostMatch> {
    let name = prop_oneof![
        mk_name("svc.cluster.local"),
        mk_name("corp.internal"),
        mk_name("in-addr.arpa"),
        mk_name("com"),
        mk_name("co.uk"),
        mk_name("github.io"),
        mk_name("example.com"),
        mk_name("example.org"),
    ];
    (name, 0u8..3).prop_map(|(name, kind)| match kind {
        0 => parse_host(&name).expect("generated hosts are valid"),
        1 => parse_host(&format!("*.{name}")).expect("generated hosts are valid"),
        // The shadow profile's any-depth wildcard (a load balancer's `*.name`).
        _ => HostMatch::DeepWildcard(name),
    })
}

/// The name a rule for `host` would capture that lies deepest toward the zone.
fn names_of(host: &HostMatch) -> &str {
    match host {
        HostMatch::Exact(name) | HostMatch::Wildcard(name) | HostMatch::DeepWildcard(name) => name,
        HostMatch::Any => "",
    }
}

proptest! {
    #[test]
    fn every_host_is_rewritten_or_refused_exactly_once(hosts in prop::collection::vec(mk_host(), 0..12)) {
        let policy = mk_policy("corp.internal", &[]);
        let plan = policy.plan(&hosts);
        let mut unique = hosts.clone();
        unique.sort();
        unique.dedup();
        let mut seen: Vec<HostMatch> = plan.rewrite.iter().cloned().chain(plan.refused.iter().map(|r| r.host.clone())).collect();
        seen.sort();
        prop_assert_eq!(seen, unique);
    }

    #[test]
    fn nothing_the_cluster_answers_and_no_public_suffix_is_ever_rewritten(
        hosts in prop::collection::vec(mk_host(), 0..12),
    ) {
        let policy = mk_policy("corp.internal", &[]);
        for host in policy.plan(&hosts).rewrite {
            let name = names_of(&host);
            for zone in ["cluster.local", "corp.internal", "in-addr.arpa", "ip6.arpa"] {
                prop_assert!(!at_or_under(name, zone), "{host} is in {zone}");
                if let HostMatch::Wildcard(suffix) = &host {
                    prop_assert!(zone.split_once('.').map(|(_, p)| p) != Some(suffix.as_str()), "{host} covers {zone}");
                }
                if let HostMatch::DeepWildcard(suffix) = &host {
                    prop_assert!(!at_or_under(zone, suffix), "{host} covers {zone}");
                }
            }
            prop_assert!(psl::suffix_str(name) != Some(name), "{host} is (on) a public suffix");
        }
    }

    #[test]
    fn with_dns_domains_only_hosts_under_them_are_rewritten(hosts in prop::collection::vec(mk_host(), 0..12)) {
        let policy = mk_policy("cluster.local", &["example.com"]);
        for host in policy.plan(&hosts).rewrite {
            prop_assert!(at_or_under(names_of(&host), "example.com"), "{host}");
        }
    }

    #[test]
    fn hostile_domain_and_exclude_strings_never_panic(s in "\\PC{0,40}") {
        let _ = s.parse::<DnsDomain>();
        let _ = s.parse::<DnsExclude>();
        let _ = parse_cluster_domain(&s);
    }
}
