//! shunt's DNS rules loaded into a real CoreDNS and queried: the block `shunt dns` prints, and the
//! block `--manage-coredns` writes taking effect through `reload`. Served hosts (exact and
//! one-label wildcard, A and AAAA) answer with shunt's Service; the search-path expansions of a
//! pod with `ndots:5`, deeper names and cluster names are left alone.

use std::{net::IpAddr, process::Stdio, sync::Arc, time::Duration};

use hickory_client::proto::{op::ResponseCode, rr::RecordType};
use serde_json::json;

use super::{
    OURS,
    envtest::{
        Binaries, Real,
        dns_server::{CoreDns, PUBLIC_V4, SHUNT_V4, SHUNT_V6, cluster_corefile, query, write_zone},
        say_skipped,
    },
    eventually, mk_ingress, mk_service,
};

const WITHIN: Duration = Duration::from_secs(20);

/// The CoreDNS binary, or `None` after one line saying why. An envtest directory
/// (`$KUBEBUILDER_ASSETS`) has none, so these tests are never required.
fn coredns_binary() -> Option<std::path::PathBuf> {
    let found = Binaries::find().and_then(|b| b.coredns());
    if found.is_none() {
        say_skipped("real CoreDNS tests", "no coredns beside kube-apiserver");
    }
    found
}

/// The routed hosts: one exact, one wildcard.
async fn route_hosts(real: &Real) {
    let ns = &real.ns;
    real.apply(mk_service(ns, "shunt")).await;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_ingress(ns, "shop", OURS, "shop.example.com", "web"))
        .await;
    real.apply(mk_ingress(ns, "apps", OURS, "*.apps.example.com", "web"))
        .await;
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an address")
}

/// Answers for the served names, and for the names shunt must leave alone.
async fn assert_rules_apply(dns: &CoreDns, ns: &str) {
    let a = async |name: &str| query(dns.addr, name, RecordType::A).await;
    let shunt = |name: &str| vec![(name.to_string(), ip(SHUNT_V4))];
    assert_eq!(a("shop.example.com.").await.records, shunt("shop.example.com."));
    assert_eq!(a("x.apps.example.com.").await.records, shunt("x.apps.example.com."));
    let aaaa = query(dns.addr, "shop.example.com.", RecordType::AAAA).await;
    assert_eq!(aaaa.records, vec![("shop.example.com.".to_string(), ip(SHUNT_V6))]);
    // One label only below a wildcard; public names go upstream.
    assert_eq!(a("a.b.apps.example.com.").await.records[0].1, ip(PUBLIC_V4));
    assert_eq!(a("www.example.org.").await.records[0].1, ip(PUBLIC_V4));
    // A pod with ndots:5 asks its search domains first: those must stay NXDOMAIN, or the pod
    // would take a rewritten answer for a name in its own namespace.
    for search in [
        format!("{ns}.svc.cluster.local."),
        "svc.cluster.local.".into(),
        "cluster.local.".into(),
    ] {
        for host in ["shop.example.com", "x.apps.example.com"] {
            let expanded = a(&format!("{host}.{search}")).await;
            assert_eq!(expanded.code, ResponseCode::NXDomain, "{host}.{search}: {expanded:?}");
        }
    }
    // Names in the cluster domain are untouched.
    let other = format!("other.{ns}.svc.cluster.local.");
    assert_eq!(a(&other).await.records, vec![(other.clone(), ip("10.96.0.11"))]);
}

#[tokio::test]
async fn the_block_shunt_dns_prints_works_in_a_real_coredns() {
    let Some(real) = Real::start("dns-print").await else {
        return;
    };
    let Some(binary) = coredns_binary() else { return };
    let ns = &real.ns;
    route_hosts(&real).await;
    let publish = format!("{ns}/shunt");
    let output = tokio::process::Command::from(super::launch::shunt())
        .arg("dns")
        .arg("--kubeconfig")
        .arg(real.kubeconfig())
        .args(["--watch-namespace", ns, "--publish-service", &publish])
        .stderr(Stdio::inherit())
        .output()
        .await
        .expect("running shunt dns");
    assert!(output.status.success(), "shunt dns: {}", output.status);
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    // The rules go inside `.:53 {`; the view block after them (top level, tests/e2e/dns_reach.rs) is left out here.
    let block = printed
        .split("# Address records only")
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(block.contains("shop.example.com"), "{block}");

    let dir = real.dir.path().to_path_buf();
    let zone = write_zone(&dir, ns);
    let dns = tokio::task::spawn_blocking(move || {
        let stub = CoreDns::start_stub(&binary, &dir);
        let indented: String = block.lines().map(|l| format!("    {l}\n")).collect();
        let cluster = CoreDns::start(&binary, &dir, "coredns", |port| {
            cluster_corefile(port, &indented, &zone, stub.addr)
        });
        (stub, cluster)
    })
    .await
    .expect("starting CoreDNS");
    assert_rules_apply(&dns.1, ns).await;
}

#[tokio::test]
async fn a_managed_corefile_edit_takes_effect_through_reload() {
    let Some(real) = Real::start("dns-managed").await else {
        return;
    };
    let Some(binary) = coredns_binary() else { return };
    let ns = &real.ns;
    route_hosts(&real).await;
    let dir = real.dir.path().to_path_buf();
    let zone = write_zone(&dir, ns);
    let (stub, dns) = tokio::task::spawn_blocking(move || {
        let stub = CoreDns::start_stub(&binary, &dir);
        let upstream = stub.addr;
        let cluster = CoreDns::start(&binary, &dir, "coredns", |port| {
            cluster_corefile(port, "", &zone, upstream)
        });
        (stub, cluster)
    })
    .await
    .expect("starting CoreDNS");
    let _stub = stub;
    let dns = Arc::new(dns);
    // The ConfigMap says `.:53`, as in a cluster; the file CoreDNS reads, its own port.
    let served = format!(".:{} {{", dns.addr.port());
    let file = std::fs::read_to_string(&dns.corefile).expect("the Corefile");
    let corefile = file.replacen(&served, ".:53 {", 1);
    real.apply(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns, "name": "coredns"},
        "data": {"Corefile": corefile}}),
    )
    .await;

    // The kubelet's part: the ConfigMap's Corefile into the file CoreDNS reads.
    let (kube, path) = (real.kube.clone(), dns.corefile.clone());
    let mirror = tokio::spawn(async move {
        loop {
            if let Some(map) = kube.get("ConfigMap", "coredns").await
                && let Some(text) = map["data"]["Corefile"].as_str()
            {
                // Every block on `.:53`: the root one and shunt's view block in front of it.
                let text = text.replace(".:53 {", &served);
                if std::fs::read_to_string(&path).ok() != Some(text.clone()) {
                    std::fs::write(&path, text).expect("writing the Corefile");
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let (publish, configmap) = (format!("{ns}/shunt"), format!("{ns}/coredns"));
    let args = [
        "--publish-service",
        &publish,
        "--manage-coredns",
        "--coredns-configmap",
        &configmap,
        "--coredns-version",
        "1.13.1",
    ];
    let _shunt = real.shunt("shunt-0", &args).await;
    eventually("shop.example.com rewritten after a reload", WITHIN, async || {
        let answer = query(dns.addr, "shop.example.com.", RecordType::A).await;
        (answer.records.first().map(|r| r.1) == Some(ip(SHUNT_V4))).then_some(())
    })
    .await;
    assert_rules_apply(&dns, ns).await;

    // A new host: shunt edits the ConfigMap, CoreDNS reloads, the name resolves to shunt.
    let late = query(dns.addr, "late.example.com.", RecordType::A).await;
    assert_eq!(late.records[0].1, ip(PUBLIC_V4), "public before the edit");
    real.apply(mk_ingress(ns, "late", OURS, "late.example.com", "web"))
        .await;
    eventually("late.example.com rewritten after a reload", WITHIN, async || {
        let answer = query(dns.addr, "late.example.com.", RecordType::A).await;
        (answer.records.first().map(|r| r.1) == Some(ip(SHUNT_V4))).then_some(())
    })
    .await;
    mirror.abort();
}
