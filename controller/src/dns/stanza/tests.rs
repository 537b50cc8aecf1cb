//! The rewrite rules of a plan: exact hosts, wildcards of one label and of any depth, exclusions,
//! refusals, and L4 LoadBalancer names.

use regex::Regex;

use super::*;

const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

fn hosts(names: &[&str]) -> Vec<HostMatch> {
    names.iter().map(|name| HostMatch::from_rule_host(name)).collect()
}

fn excludes(patterns: &[&str]) -> Vec<DnsExclude> {
    patterns.iter().map(|p| p.parse().expect("a valid pattern")).collect()
}

fn mk_release() -> Release {
    "shunt-system/shunt".parse().expect("valid")
}

fn mk_stanza(names: &[&str], exclude: &[&str]) -> Stanza {
    let plan = DnsPolicy::new("cluster.local", Vec::new(), excludes(exclude)).plan(&hosts(names));
    Stanza::new(&mk_release(), &plan, TARGET)
}

#[test]
fn exact_hosts_get_an_exact_rewrite_to_the_service() {
    let stanza = mk_stanza(&["shop.example.com", "api.example.com"], &[]);
    assert_eq!(
        stanza.rules(),
        [
            "rewrite name exact api.example.com shunt.shunt-system.svc.cluster.local",
            "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
        ]
    );
}

#[test]
fn an_any_depth_wildcard_gets_a_regex_matching_every_depth_below_its_suffix_only() {
    let plan = DnsPolicy::new("cluster.local", Vec::new(), Vec::new())
        .plan(&[HostMatch::DeepWildcard("apps.example.com".into())]);
    let stanza = Stanza::new(&mk_release(), &plan, TARGET);
    assert_eq!(
        stanza.rules(),
        [format!(
            r"rewrite stop name regex ^(?:[^.]+\.)+apps\.example\.com\.$ {TARGET}. answer auto"
        )]
    );
    let regex = Regex::new(&any_depth_regex("apps.example.com")).expect("a valid regex");
    assert!(regex.is_match("a.apps.example.com."));
    assert!(regex.is_match("a.b.apps.example.com."));
    assert!(!regex.is_match("apps.example.com."));
    assert!(!regex.is_match("a.apps.example.com.default.svc.cluster.local."));
}

#[test]
fn a_wildcard_gets_an_anchored_one_label_regex_after_the_exact_hosts() {
    let stanza = mk_stanza(&["*.apps.example.com", "shop.example.com", ""], &[]);
    assert_eq!(
        stanza.rules(),
        [
            "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
            r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ shunt.shunt-system.svc.cluster.local. answer auto",
        ]
    );
}

#[test]
fn the_regex_matches_one_label_and_nothing_else() {
    let regex = Regex::new(&one_label_regex("example.com")).expect("the rule is a valid RE2-style regex");
    assert!(regex.is_match("a.example.com."));
    assert!(regex.is_match("shop-1.example.com."));
    for name in [
        "a.b.example.com.",
        "example.com.",
        "a.example.com.default.svc.cluster.local.",
        "a.example.com",
        "a.exampleXcom.",
        "aexample.com.",
    ] {
        assert!(!regex.is_match(name), "{name} must not match");
    }
}

#[test]
fn excluded_hosts_keep_resolving_publicly() {
    let stanza = mk_stanza(
        &[
            "shop.example.com",
            "pay.example.com",
            "*.apps.example.com",
            "*.blog.example.com",
        ],
        &["pay.example.com", "*.blog.example.com", "legacy.apps.example.com"],
    );
    assert_eq!(
        stanza.rules(),
        [
            "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
            "rewrite name exact legacy.apps.example.com legacy.apps.example.com",
            r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ shunt.shunt-system.svc.cluster.local. answer auto",
        ]
    );
    let wildcard_pattern = mk_stanza(&["a.example.com", "a.b.example.com"], &["*.example.com"]);
    assert_eq!(
        wildcard_pattern.rules(),
        ["rewrite name exact a.b.example.com shunt.shunt-system.svc.cluster.local"],
        "*.example.com excludes one label only"
    );
}

#[test]
fn no_hosts_give_an_empty_but_well_formed_block() {
    let stanza = mk_stanza(&[], &[]);
    assert!(stanza.rules().is_empty());
    assert_eq!(
        stanza.to_string(),
        "# BEGIN shunt shunt-system/shunt\n# END shunt shunt-system/shunt\n"
    );
}

#[test]
fn refused_hosts_are_comments_in_the_pasted_block_and_absent_from_the_managed_rules() {
    let mut plan = DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&hosts(&[
        "shop.example.com",
        "*.com",
        "kubernetes.default.svc.cluster.local",
    ]));
    plan.refuse(
        HostMatch::from_rule_host("tke.example.com"),
        RefusalReason::Other {
            code: "CertificateUnavailable",
            detail: "no certificate".into(),
        },
    );
    let stanza = Stanza::new(&mk_release(), &plan, TARGET);
    assert_eq!(
        stanza.to_string(),
        format!(
            "# BEGIN shunt shunt-system/shunt\n\
             # refused kubernetes.default.svc.cluster.local: in the cluster domain cluster.local, which CoreDNS answers itself\n\
             # refused tke.example.com: CertificateUnavailable: no certificate\n\
             # refused *.com: a wildcard directly under the public suffix com\n\
             rewrite name exact shop.example.com {TARGET}\n\
             # END shunt shunt-system/shunt\n"
        )
    );
    assert_eq!(
        stanza.rules(),
        [format!("rewrite name exact shop.example.com {TARGET}")]
    );
    assert!(!stanza.override_file(false).contains("# refused"));
    assert!(stanza.override_file(true).contains("\n# refused *.com: "));
}

fn mk_service_name(host: &str, service: &str) -> ServiceName {
    let (namespace, name) = service.split_once('/').expect("NS/NAME");
    ServiceName {
        host: HostMatch::from_rule_host(host),
        target: format!("{name}.{namespace}.svc.cluster.local"),
        service: service.to_string(),
    }
}

#[test]
fn load_balancer_names_answer_with_their_service_unless_refused_or_taken() {
    let policy = DnsPolicy::new("cluster.local", Vec::new(), excludes(&["skip.example.com"]));
    let mut stanza = Stanza::new(
        &mk_release(),
        &policy.plan(&hosts(&["shop.example.com", "*.apps.example.com"])),
        TARGET,
    );
    stanza.add_services(
        &policy,
        &[
            mk_service_name("db.example.com", "data/db"),
            mk_service_name("x.apps.example.com", "data/x"),
            mk_service_name("skip.example.com", "data/skip"),
            mk_service_name("api.default.svc.cluster.local", "data/api"),
        ],
    );
    assert_eq!(
        stanza.rules(),
        [
            format!("rewrite name exact shop.example.com {TARGET}"),
            "rewrite name exact db.example.com db.data.svc.cluster.local".to_string(),
            format!(r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ {TARGET}. answer auto"),
        ]
    );
    let refused: Vec<String> = stanza.refused().iter().map(|r| r.host.to_string()).collect();
    assert_eq!(
        refused,
        [
            "api.default.svc.cluster.local",
            "skip.example.com",
            "x.apps.example.com"
        ]
    );
    assert!(stanza.hosts().contains(&HostMatch::from_rule_host("db.example.com")));
}

#[test]
fn exclude_patterns_use_the_ingress_host_parser() {
    for bad in [
        "",
        "a.*.example.com",
        "a b.example.com",
        "x\nrewrite",
        "10.0.0.1",
        "a..b",
    ] {
        assert!(bad.parse::<DnsExclude>().is_err(), "{bad:?}");
    }
    assert_eq!(
        "Shop.Example.com".parse::<DnsExclude>(),
        Ok(DnsExclude(HostMatch::Exact("shop.example.com".into())))
    );
}
