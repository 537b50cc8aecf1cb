//! `shunt dns --manifests`: the built binary prints the CoreDNS rules for exactly the hosts the
//! same manifests would serve (our class, shadowed classes; never foreign ones or excluded hosts).

use std::process::Output;

use crate::support::*;

pub const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

pub async fn shunt_dns(manifests: &Manifests, args: &[&str]) -> Output {
    let output = tokio::process::Command::from(crate::support::launch::shunt())
        .arg("dns")
        .arg("--manifests")
        .arg(manifests.path())
        .args(["--publish-service", "shunt-system/shunt"])
        .args(args)
        .output();
    let within = std::time::Duration::from_secs(10);
    tokio::time::timeout(within, output)
        .await
        .expect("shunt dns finishes")
        .expect("shunt dns runs")
}

pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "shunt dns failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

fn manifests() -> Manifests {
    let manifests = Manifests::new();
    let ours = mk_ingress("shop", "ours")
        .rule("shop.example.com", [mk_path("/", "Prefix", "web", 80)])
        .rule("*.apps.example.com", [mk_path("/", "Prefix", "web", 80)])
        .rule("", [mk_path("/", "Prefix", "web", 80)]);
    // A VPC-CNI cluster's CLB reaches the ClusterIP Service's pods directly (else TKE's E4047).
    let clb = mk_ingress("shop", "clb")
        .class("qcloud")
        .annotation("ingress.cloud.tencent.com/direct-access", "true")
        .rule("pay.example.com", [mk_path("/", "Prefix", "web", 80)]);
    let foreign = mk_ingress("shop", "foreign")
        .class("nginx")
        .rule("nginx.example.com", [mk_path("/", "Prefix", "web", 80)]);
    manifests.write("ingresses.yaml", &[&ours, &clb, &foreign]);
    // Hosts whose every path fails to compile are not served, so the Service must exist.
    manifests.write("web.yaml", &[&mk_service_on_ports("shop", "web", None, &[])]);
    manifests
}

#[tokio::test]
async fn the_block_rewrites_our_exact_and_wildcard_hosts_to_the_service() {
    let printed = stdout(&shunt_dns(&manifests(), &[]).await);
    assert_eq!(
        printed,
        format!(
            "# BEGIN shunt shunt-system/shunt\nrewrite name exact shop.example.com {TARGET}\n\
             rewrite stop name regex ^[^.]+\\.apps\\.example\\.com\\.$ {TARGET}. answer auto\n\
             # END shunt shunt-system/shunt\n\
             # Address records only (CoreDNS 1.10.0 or later): paste at top level, before `.:53 {{`,\n\
             # with `.:53`'s own forward (and bind) lines in place of this forward line\n\
             # BEGIN shunt-view shunt-system/shunt\n.:53 {{\n    view shunt-shunt-system-shunt {{\n\
             \x20       expr type() != 'A' && type() != 'AAAA' && (name() in ['shop.example.com.'] || \
             name() matches '^[^.]+\\\\.apps\\\\.example\\\\.com\\\\.$')\n    }}\n\
             \x20   forward . /etc/resolv.conf\n}}\n# END shunt-view shunt-system/shunt\n"
        )
    );
}

#[tokio::test]
async fn a_coredns_without_view_gets_the_rules_alone() {
    let printed = stdout(&shunt_dns(&manifests(), &["--coredns-version", "1.9.4"]).await);
    assert!(printed.ends_with("# END shunt shunt-system/shunt\n"), "{printed}");
    assert!(!printed.contains("view"), "{printed}");
}

#[tokio::test]
async fn shadowed_classes_are_included_and_excluded_hosts_left_out() {
    let args = [
        "--shadow-class",
        "qcloud",
        "--dns-exclude",
        "shop.example.com",
        "--cluster-domain",
        "corp.local",
    ];
    let printed = stdout(&shunt_dns(&manifests(), &args).await);
    let target = "shunt.shunt-system.svc.corp.local";
    assert!(
        printed.contains(&format!("rewrite name exact pay.example.com {target}\n")),
        "{printed}"
    );
    assert!(!printed.contains("rewrite name exact shop.example.com"), "{printed}");
    assert!(
        printed.contains("\n# refused shop.example.com: excluded by --dns-exclude shop.example.com\n"),
        "{printed}"
    );
    assert!(!printed.contains("nginx.example.com"), "{printed}");
}

#[tokio::test]
async fn the_override_format_is_a_coredns_custom_key() {
    let printed = stdout(&shunt_dns(&manifests(), &["--format", "override"]).await);
    assert!(
        printed.starts_with("# BEGIN shunt shunt-system/shunt\n# written by shunt"),
        "{printed}"
    );
    assert!(printed.ends_with("\n# END shunt shunt-system/shunt\n"), "{printed}");
    assert!(printed.contains(&format!("\nrewrite name exact shop.example.com {TARGET}\n")));
}

#[tokio::test]
async fn a_broken_manifest_is_an_error_not_an_empty_block() {
    let manifests = Manifests::new();
    manifests.write_text("broken.yaml", "kind: Ingress\nmetadata: [\n");
    let output = shunt_dns(&manifests, &[]).await;
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "nothing to paste by mistake");
    assert!(String::from_utf8_lossy(&output.stderr).contains("broken.yaml"));
}

/// The reproduction: an Ingress anyone may create names the API server, another team's
/// Service and every second-level `.com` name.
fn mk_hostile_manifests() -> Manifests {
    let manifests = Manifests::new();
    let hostile = mk_ingress("shop", "hostile")
        .rule("*.com", [mk_path("/", "Prefix", "web", 80)])
        .rule(
            "kubernetes.default.svc.cluster.local",
            [mk_path("/", "Prefix", "web", 80)],
        )
        .rule("payments.prod.svc.cluster.local", [mk_path("/", "Prefix", "web", 80)])
        .rule("shop.example.com", [mk_path("/", "Prefix", "web", 80)])
        .rule("shop.example.org", [mk_path("/", "Prefix", "web", 80)]);
    manifests.write("ingresses.yaml", &[&hostile]);
    manifests.write("web.yaml", &[&mk_service_on_ports("shop", "web", None, &[])]);
    manifests
}

#[tokio::test]
async fn cluster_names_and_public_suffixes_are_printed_as_refused_never_as_rules() {
    let printed = stdout(&shunt_dns(&mk_hostile_manifests(), &[]).await);
    let (rules, view) = printed.split_once("# Address records only").expect("a view block");
    assert!(!view.contains("cluster.local") && !view.contains("'com"), "{view}");
    assert_eq!(
        rules,
        format!(
            "# BEGIN shunt shunt-system/shunt\n\
             # refused kubernetes.default.svc.cluster.local: in the cluster domain cluster.local, which CoreDNS answers itself\n\
             # refused payments.prod.svc.cluster.local: in the cluster domain cluster.local, which CoreDNS answers itself\n\
             # refused *.com: a wildcard directly under the public suffix com\n\
             rewrite name exact shop.example.com {TARGET}\n\
             rewrite name exact shop.example.org {TARGET}\n\
             # END shunt shunt-system/shunt\n"
        )
    );
}

#[tokio::test]
async fn dns_domains_limit_the_rules_and_release_names_the_block() {
    let args = ["--dns-domain", "example.com", "--release", "team-a/edge"];
    let printed = stdout(&shunt_dns(&mk_hostile_manifests(), &args).await);
    assert!(printed.starts_with("# BEGIN shunt team-a/edge\n"), "{printed}");
    assert!(printed.ends_with("\n# END shunt-view team-a/edge\n"), "{printed}");
    assert!(printed.contains("\n# END shunt team-a/edge\n"), "{printed}");
    assert!(printed.contains(&format!("\nrewrite name exact shop.example.com {TARGET}\n")));
    assert!(printed.contains("\n# refused shop.example.org: not under a --dns-domain (example.com)\n"));
    assert_eq!(printed.matches("rewrite ").count(), 1, "{printed}");
}

#[tokio::test]
async fn a_bad_exclude_pattern_or_domain_fails_with_a_one_line_reason() {
    for (flag, value) in [
        ("--dns-exclude", "shop example.com"),
        ("--dns-exclude", "a.*.example.com"),
        ("--dns-domain", "*.example.com"),
        ("--cluster-domain", "cluster local"),
        ("--release", "Team/x"),
    ] {
        let output = shunt_dns(&manifests(), &[flag, value]).await;
        assert!(!output.status.success(), "{flag} {value:?} is refused");
        assert!(output.stdout.is_empty(), "nothing to paste by mistake");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: invalid value") && first.contains(flag),
            "{stderr}"
        );
    }
}
