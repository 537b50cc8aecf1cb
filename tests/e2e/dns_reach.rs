//! DNS that reaches every caller, against real CoreDNS processes on loopback:
//!
//! ```text
//! resolver ─▶ node-local-dns (Tencent's template + shunt's block) ─┬ cluster.local, served zones ─▶ kube-dns
//!                                                                  └ .  ─────────────────────────▶ upstream
//! kube-dns: shunt's rules + view block, `hosts` standing in for the kubernetes plugin ─▶ upstream
//! upstream: public names ─▶ the "load balancer" 203.0.113.10, with TXT, CAA and the zone's SOA
//! ```
//!
//! Through node-local-dns served names resolve to shunt's Service, unserved and cluster names as
//! before, SOA/TXT/CAA of a served name as upstream answers them, an L4 Service's name to its
//! ClusterIP; without shunt's block node-local-dns takes served names past the rules; and
//! `shunt dns check` reports each case.

mod coredns;

use std::{net::IpAddr, time::Duration};

use serde_json::{Value, json};
use shunt_controller::dns::{
    DnsPolicy, Release, Stanza, nodelocal, replace_block,
    resolve::{ResolvConf, exchange, wire},
    services::{HOSTNAME_ANNOTATION, ServiceName},
    view,
};
use shunt_spec::HostMatch;

use self::coredns::{CoreDns, free_port};
use crate::support::*;

const SHUNT: &str = "shunt.shunt-system.svc.cluster.local";
const SHUNT_IP: &str = "10.96.0.50";
const DB_IP: &str = "10.96.0.60";
const API_IP: &str = "10.96.0.1";
const LOAD_BALANCER: &str = "203.0.113.10";
const TENCENT: &str = include_str!("../../controller/src/dns/testdata/tencent-node-local-dns.Corefile");
const SERVED: [&str; 2] = ["shop.example.com", "*.apps.example.com"];

fn ip(s: &str) -> IpAddr {
    s.parse().expect("an address")
}

/// The public side: every example.com name answers with the load balancer, plus TXT, CAA and
/// the zone's SOA (in the authority section of NODATA answers, as a real server sends it).
fn upstream_corefile(port: u16) -> String {
    let soa = "example.com. 60 IN SOA ns.example.com. hostmaster.example.com. 7 3600 600 86400 60";
    format!(
        ".:{port} {{\n    bind 127.0.0.1\n\
         \x20   template IN A example.com {{\n        answer \"{{{{ .Name }}}} 60 IN A {LOAD_BALANCER}\"\n    }}\n\
         \x20   template IN TXT example.com {{\n        answer \"{{{{ .Name }}}} 60 IN TXT \\\"v=public\\\"\"\n    }}\n\
         \x20   template IN CAA example.com {{\n        answer \"{{{{ .Name }}}} 60 IN CAA 0 issue \\\"letsencrypt.org\\\"\"\n    }}\n\
         \x20   template IN SOA example.com {{\n        answer \"{soa}\"\n    }}\n\
         \x20   template ANY ANY example.com {{\n        rcode NOERROR\n        authority \"{soa}\"\n    }}\n}}\n"
    )
}

/// kube-dns as TKE ships it, with `hosts` answering the Services in place of the kubernetes
/// plugin (which needs an API server) and the upstream in place of the node's resolv.conf.
fn kube_dns_corefile(port: u16, upstream: u16) -> String {
    format!(
        ".:{port} {{\n    bind 127.0.0.1\n    errors\n    hosts services cluster.local {{\n        fallthrough\n    }}\n\
         \x20   forward . 127.0.0.1:{upstream} {{\n        prefer_udp\n    }}\n    cache 30\n    reload 2s\n    loadbalance\n}}\n"
    )
}

const SERVICES: &str = "10.96.0.50 shunt.shunt-system.svc.cluster.local\n\
                        10.96.0.60 db.data.svc.cluster.local\n\
                        10.96.0.1 kubernetes.default.svc.cluster.local\n";

/// Tencent's node-local-dns template as node-cache fills it in: the listen address, kube-dns
/// and the upstream, without the metrics and health listeners (fixed ports) tests would share.
fn node_local_corefile(template: &str, port: u16, kube_dns: u16, upstream: u16) -> String {
    template
        .replace(":53 ", &format!(":{port} "))
        .replace("__PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__", "127.0.0.1")
        .replace("__PILLAR__CLUSTER__DNS__", &format!("127.0.0.1:{kube_dns}"))
        .replace("__PILLAR__UPSTREAM__SERVERS__", &format!("127.0.0.1:{upstream}"))
        .lines()
        .filter(|line| !line.contains("prometheus") && !line.contains("health"))
        .map(|line| format!("{line}\n"))
        .collect()
}

fn mk_release() -> Release {
    "shunt-system/shunt".parse().expect("valid")
}

/// shunt's rules for the served hosts and the L4 name, as the managed writer builds them.
fn mk_stanza() -> Stanza {
    let policy = DnsPolicy::new("cluster.local", Vec::new(), Vec::new());
    let hosts: Vec<HostMatch> = SERVED.iter().map(|h| HostMatch::from_rule_host(h)).collect();
    let mut stanza = Stanza::new(&mk_release(), &policy.plan(&hosts), SHUNT);
    let db = ServiceName {
        host: HostMatch::from_rule_host("db.example.com"),
        target: "db.data.svc.cluster.local".into(),
        service: "data/db".into(),
    };
    stanza.add_services(&policy, &[db]);
    stanza
}

/// The whole setup: upstream, kube-dns with shunt's edits, node-local-dns with and without.
struct Dns {
    upstream: CoreDns,
    node_local: CoreDns,
    plain_node_local: CoreDns,
    _kube_dns: CoreDns,
}

async fn start() -> Option<Dns> {
    let binary = coredns::binary()?;
    let [upstream, kube_dns, node_local, plain] = [(); 4].map(|()| free_port());
    let stanza = mk_stanza();
    let kube = replace_block(&kube_dns_corefile(kube_dns, upstream), &stanza).expect("the rules");
    let kube = view::replace_view(&kube, &mk_release(), stanza.hosts()).expect("the view block");
    let policy = DnsPolicy::new("cluster.local", Vec::new(), Vec::new());
    let zones = nodelocal::zones(stanza.hosts(), &policy);
    let template = node_local_corefile(TENCENT, node_local, kube_dns, upstream);
    let managed = nodelocal::replace(&template, &mk_release(), &zones).expect("the node-local block");
    let probe = "probe.example.com";
    Some(Dns {
        upstream: CoreDns::start(binary, upstream, &upstream_corefile(upstream), &[], probe).await,
        _kube_dns: CoreDns::start(binary, kube_dns, &kube, &[("services", SERVICES)], probe).await,
        node_local: CoreDns::start(binary, node_local, &managed, &[], probe).await,
        plain_node_local: {
            let corefile = node_local_corefile(TENCENT, plain, kube_dns, upstream);
            CoreDns::start(binary, plain, &corefile, &[], probe).await
        },
    })
}

/// A pod's resolver: kubelet's search list and ndots:5, one nameserver.
fn pod_resolver(server: &CoreDns) -> String {
    format!(
        "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver {}\noptions ndots:5 timeout:2 attempts:2\n",
        server.addr
    )
}

async fn addresses(server: &CoreDns, name: &str) -> Vec<IpAddr> {
    let conf = ResolvConf::parse(&pod_resolver(server));
    let resolved = conf.lookup_ip(name).await.expect("a nameserver answers");
    resolved.map(|r| r.addresses).unwrap_or_default()
}

#[tokio::test]
async fn through_node_local_dns_served_names_reach_shunt_and_everything_else_resolves_as_before() {
    let Some(dns) = start().await else { return };
    assert_eq!(addresses(&dns.node_local, "shop.example.com").await, [ip(SHUNT_IP)]);
    assert_eq!(addresses(&dns.node_local, "any.apps.example.com").await, [ip(SHUNT_IP)]);
    assert_eq!(
        addresses(&dns.node_local, "db.example.com").await,
        [ip(DB_IP)],
        "the L4 name, its ClusterIP"
    );
    assert_eq!(
        addresses(&dns.node_local, "other.example.com").await,
        [ip(LOAD_BALANCER)],
        "unserved"
    );
    assert_eq!(
        addresses(&dns.node_local, "a.b.apps.example.com").await,
        [ip(LOAD_BALANCER)],
        "one label only"
    );
    assert_eq!(
        addresses(&dns.node_local, "kubernetes.default.svc.cluster.local").await,
        [ip(API_IP)]
    );
    assert_eq!(
        addresses(&dns.node_local, "kubernetes.default").await,
        [ip(API_IP)],
        "through the search list"
    );
    // Tencent's template alone sends the served names straight upstream: the issue's bypass.
    assert_eq!(
        addresses(&dns.plain_node_local, "shop.example.com").await,
        [ip(LOAD_BALANCER)]
    );
}

#[tokio::test]
async fn soa_txt_and_caa_of_a_served_name_are_the_upstreams_answers() {
    let Some(dns) = start().await else { return };
    let within = Duration::from_secs(2);
    for name in ["shop.example.com", "x.apps.example.com", "db.example.com"] {
        for (rtype, what) in [
            (wire::SOA, "SOA"),
            (wire::TXT, "TXT"),
            (wire::CAA, "CAA"),
            (wire::AAAA, "AAAA"),
        ] {
            let public = exchange(dns.upstream.addr, name, rtype, within)
                .await
                .expect("upstream answers");
            let cached = exchange(dns.node_local.addr, name, rtype, within)
                .await
                .expect("node-local answers");
            if rtype == wire::AAAA {
                // Address records are shunt's: no AAAA for an IPv4 Service, never the public one.
                assert!(cached.answers.is_empty(), "{name} {what}: {cached:?}");
                continue;
            }
            assert_eq!(
                (cached.rcode, &cached.answers),
                (public.rcode, &public.answers),
                "{name} {what}"
            );
            assert!(!public.answers.is_empty(), "{name} {what}: the stub answers it");
        }
    }
}

fn check_manifests() -> Manifests {
    let manifests = Manifests::new();
    let mut ingress = mk_ingress("shop", "web");
    for host in SERVED {
        ingress = ingress.rule(host, [mk_path("/", "Prefix", "web", 80)]);
    }
    let ingress = ingress.rule(
        "kubernetes.default.svc.cluster.local",
        [mk_path("/", "Prefix", "web", 80)],
    );
    manifests.write("ingress.yaml", &[&ingress]);
    manifests.write("web.yaml", &[&mk_service_on_ports("shop", "web", None, &[])]);
    let db: Value = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "data", "name": "db", "annotations": {HOSTNAME_ANNOTATION: "db.example.com"}},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 5432}]}});
    manifests.write("db.yaml", &[&db]);
    manifests
}

async fn shunt_dns_check(manifests: &Manifests, resolver: &str) -> std::process::Output {
    let resolv_conf = manifests.path().join("resolv.conf.txt");
    std::fs::write(&resolv_conf, resolver).expect("resolv.conf written");
    let output = tokio::process::Command::from(crate::support::launch::shunt())
        .args(["dns", "check", "--manifests"])
        .arg(manifests.path().join("ingress.yaml"))
        .arg("--manifests")
        .arg(manifests.path().join("web.yaml"))
        .arg("--manifests")
        .arg(manifests.path().join("db.yaml"))
        .args([
            "--publish-service",
            "shunt-system/shunt",
            "--dns-loadbalancer-services",
            "--resolv-conf",
        ])
        .arg(&resolv_conf)
        .output();
    tokio::time::timeout(Duration::from_secs(30), output)
        .await
        .expect("shunt dns check finishes")
        .expect("shunt dns check runs")
}

#[tokio::test]
async fn shunt_dns_check_reports_each_host_and_fails_where_node_local_dns_bypasses_shunt() {
    let Some(dns) = start().await else { return };
    let manifests = check_manifests();
    let good = shunt_dns_check(&manifests, &pod_resolver(&dns.node_local)).await;
    let printed = String::from_utf8_lossy(&good.stdout);
    assert!(
        good.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&good.stderr)
    );
    assert_eq!(
        printed.lines().collect::<Vec<_>>(),
        [
            format!("db.example.com: resolves to db.data.svc.cluster.local ({DB_IP})"),
            format!("shop.example.com: resolves to {SHUNT} ({SHUNT_IP})"),
            format!("*.apps.example.com (as shunt-dns-check.apps.example.com): resolves to {SHUNT} ({SHUNT_IP})"),
            format!(
                "kubernetes.default.svc.cluster.local: refused (in the cluster domain cluster.local, which CoreDNS answers itself); resolves to {API_IP}"
            ),
        ]
    );
    let bypassed = shunt_dns_check(&manifests, &pod_resolver(&dns.plain_node_local)).await;
    let printed = String::from_utf8_lossy(&bypassed.stdout);
    assert_eq!(bypassed.status.code(), Some(1), "{printed}");
    assert!(
        printed.contains(&format!(
            "shop.example.com: resolves elsewhere ({LOAD_BALANCER}), not to {SHUNT}: "
        )),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("db.example.com: resolves elsewhere ({LOAD_BALANCER})")),
        "{printed}"
    );
}
