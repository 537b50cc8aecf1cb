//! TKE shadow mode (qcloud profile): CLB answers reproduced, or hosts refused with reasons.
//!
//! `examples/tke` (the Ingresses) plus echo backends behind `shop/web` and `shop/api` and the
//! `shop/shop-tls` certificate, served by `shunt serve --shadow-class qcloud`; real HTTP and
//! HTTPS requests, `/shadow`, `/metrics` and `shunt dns` over the same files.

use std::{path::Path, process::Output, time::Duration};

use http::{StatusCode, header};
use serde_json::Value;

use crate::support::*;

const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

/// The example set, the backends it routes to, and shunt serving it.
struct Tke {
    _backends: Vec<Backend>,
    manifests: Manifests,
    shunt: Shunt,
    ca: TestCa,
}

async fn start_tke() -> Tke {
    let manifests = Manifests::from_example("tke");
    let backends = vec![Backend::start("web").await, Backend::start("api").await];
    // NodePort, as TKE's examples write them: a ClusterIP one without direct-access is E4047.
    let services: Vec<_> = backends
        .iter()
        .map(|b| node_port(mk_backend_service("shop", &b.name, None, &[b])))
        .collect();
    manifests.write("services.yaml", &[&services]);
    let ca = TestCa::new("tke");
    let leaf = ca.issue(&["shop.example.com", "*.shop.example.com"]);
    manifests.write("shop-tls.yaml", &[&mk_tls_secret("shop", "shop-tls", &leaf)]);
    let shunt = Shunt::start(manifests.path(), &["--shadow-class", "qcloud"]).await;
    Tke {
        _backends: backends,
        manifests,
        shunt,
        ca,
    }
}

/// Services as TKE's examples write them: NodePort (a ClusterIP one without direct-access is E4047).
pub(crate) fn node_port(mut documents: Vec<Value>) -> Vec<Value> {
    for document in documents.iter_mut().filter(|d| d["kind"] == "Service") {
        document["spec"]["type"] = "NodePort".into();
    }
    documents
}

async fn https(tke: &Tke, client: &TlsClient, host: &str, path: &str) -> Reply {
    client.send(tke.shunt.https, Some(host), get(host, path)).await
}

fn location(reply: &Reply) -> &str {
    reply
        .headers
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("a Location header, got {} {:?}", reply.status, reply.headers))
}

#[tokio::test]
async fn plain_http_hosts_get_character_prefixes_the_default_domain_and_x_client_proto() {
    let tke = start_tke().await;
    let api = tke.shunt.get("blog.example.com", "/apiary").await;
    assert_eq!(api.backend(), "api", "/api is a character prefix");
    assert_eq!(api.seen_header("x-client-proto").as_deref(), Some("http"));
    assert_eq!(tke.shunt.get("blog.example.com", "/").await.backend(), "web");
    assert_eq!(
        tke.shunt.get("unknown.example.org", "/x").await.backend(),
        "web",
        "an unknown Host gets the default domain"
    );
    assert_eq!(tke.shunt.get("blog.example.com", "/").await.status, StatusCode::OK);
    let tls_only = tke.shunt.get("pay.example.com", "/").await;
    assert_eq!(
        tls_only.status,
        StatusCode::NOT_FOUND,
        "a TLS-only CLB host is not answered on HTTP"
    );
}

#[tokio::test]
async fn https_hosts_are_served_with_their_certificate_and_http_is_redirected() {
    let tke = start_tke().await;
    let client = tke.ca.client();
    let shop = https(&tke, &client, "shop.example.com", "/cart").await;
    assert_eq!(shop.backend(), "web");
    assert_eq!(shop.seen_header("x-client-proto").as_deref(), Some("https"));

    let redirected = tke.shunt.get("shop.example.com", "/cart?item=1").await;
    assert_eq!(redirected.status, StatusCode::TEMPORARY_REDIRECT, "the per-host code");
    assert_eq!(location(&redirected), "https://shop.example.com/cart?item=1");

    let slash = https(&tke, &client, "shop.example.com", "/static?v=2").await;
    assert_eq!(slash.status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(location(&slash), "https://shop.example.com/static/?v=2");
    assert_eq!(
        https(&tke, &client, "shop.example.com", "/static/app.js")
            .await
            .backend(),
        "api"
    );

    let one_label = https(&tke, &client, "eu.shop.example.com", "/").await;
    assert_eq!(one_label.backend(), "api");
    // X.509 wildcards cover one label: a deeper name is matched by the CLB's rule, not the certificate.
    let deep = TlsClient::any_certificate();
    assert_eq!(https(&tke, &deep, "a.eu.shop.example.com", "/").await.backend(), "api");
    let redirected_deep = tke.shunt.get("a.eu.shop.example.com", "/").await;
    assert_eq!(redirected_deep.status, StatusCode::FOUND, "the default code");
}

#[tokio::test]
async fn shadow_lists_a_verdict_per_host_with_reasons_and_assumptions() {
    let tke = start_tke().await;
    let shadow = tke.shunt.admin("/shadow").await.json();
    assert_eq!(shadow["profile"], "qcloud");
    assert!(shadow["assumed"].as_array().is_some_and(|a| !a.is_empty()));
    let verdict = |host: &str| -> Value {
        shadow["hosts"]
            .as_array()
            .and_then(|hosts| hosts.iter().find(|h| h["host"] == host).cloned())
            .unwrap_or_else(|| panic!("no verdict for {host}: {shadow:#}"))
    };
    assert_eq!(verdict("blog.example.com")["verdict"], "identical");
    assert_eq!(verdict("shop.example.com")["verdict"], "identical");
    assert_eq!(verdict("shop.example.com")["certificate"], "shop/shop-tls");
    assert_eq!(verdict("*.shop.example.com")["verdict"], "identical");
    let pay = verdict("pay.example.com");
    assert_eq!(pay["verdict"], "refused");
    assert!(
        pay["reasons"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("CertificateUnavailable")),
        "{pay}"
    );
    let legacy = verdict("legacy.example.com");
    assert_eq!(legacy["verdict"], "refused");
    assert_eq!(
        legacy["ingresses"],
        serde_json::json!(["shop/legacy-a", "shop/legacy-b"])
    );
    assert!(
        legacy["reasons"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("AmbiguousLoadBalancer"))
    );

    let metrics = tke.shunt.metrics().await;
    assert_eq!(
        sample(&metrics, "shunt_shadow_hosts", &[("verdict", "refused")]),
        Some(2.0)
    );
    assert_eq!(
        sample(&metrics, "shunt_shadow_hosts", &[("verdict", "identical")]),
        Some(3.0)
    );
    assert!(
        tke.shunt.logs().iter().any(|line| line.contains("Shadow verdicts")),
        "a start-up line"
    );
}

async fn shunt_dns(manifests: &Manifests, args: &[&str]) -> String {
    let output: Output = tokio::process::Command::from(crate::support::launch::shunt())
        .arg("dns")
        .arg("--manifests")
        .arg(manifests.path())
        .args(["--publish-service", "shunt-system/shunt", "--shadow-class", "qcloud"])
        .args(args)
        .output()
        .await
        .expect("shunt dns runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[tokio::test]
async fn shunt_dns_leaves_refused_hosts_out_with_a_comment_saying_why() {
    let tke = start_tke().await;
    let within = Duration::from_secs(10);
    let printed = tokio::time::timeout(within, shunt_dns(&tke.manifests, &[]))
        .await
        .expect("shunt dns finishes");
    for host in ["blog.example.com", "shop.example.com"] {
        assert!(
            printed.contains(&format!("rewrite name exact {host} {TARGET}\n")),
            "{printed}"
        );
    }
    assert!(
        printed.contains(r"rewrite stop name regex ^(?:[^.]+\.)+shop\.example\.com\.$"),
        "any depth: {printed}"
    );
    assert!(
        printed.contains("# refused pay.example.com: ShadowRefused: CertificateUnavailable"),
        "{printed}"
    );
    assert!(
        printed.contains("# refused legacy.example.com: ShadowRefused: AmbiguousLoadBalancer"),
        "{printed}"
    );
    assert!(
        !printed.contains(&format!("exact pay.example.com {TARGET}")),
        "{printed}"
    );
    assert!(
        !printed.contains(&format!("exact legacy.example.com {TARGET}")),
        "{printed}"
    );

    let all = tokio::time::timeout(within, shunt_dns(&tke.manifests, &["--shadow-rewrite", "all"]))
        .await
        .expect("shunt dns finishes");
    assert!(
        all.contains(&format!("rewrite name exact pay.example.com {TARGET}\n")),
        "{all}"
    );
    assert!(!all.contains("# refused"), "{all}");
}

/// `shunt shadow report` over `manifests` for the qcloud and nginx classes, and its output.
async fn shadow_report(manifests: &Manifests, args: &[&str]) -> Output {
    tokio::process::Command::from(crate::support::launch::shunt())
        .args(["shadow", "report", "--manifests"])
        .arg(manifests.path())
        .args(["--shadow-class", "qcloud", "--shadow-class", "nginx"])
        .args(args)
        .output()
        .await
        .expect("shunt shadow report runs")
}

fn text(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

/// The example set with its Services (no endpoints needed), a qcloud catch-all and an nginx
/// Ingress ingress-nginx skips for its snippet.
fn report_manifests() -> Manifests {
    let manifests = Manifests::from_example("tke");
    let services: Vec<Vec<Value>> = ["web", "api"]
        .iter()
        .map(|name| node_port(mk_service_on_ports("shop", name, None, &[])))
        .collect();
    manifests.write("services.yaml", &[&services[0], &services[1]]);
    let catch_all = mk_ingress("shop", "default-only")
        .class("qcloud")
        .default_backend("web", 80);
    let snippet = mk_ingress("shop", "snippet")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/server-snippet", "return 418;")
        .rule("snippet.example.com", [mk_path("/", "Prefix", "web", 80)]);
    manifests.write("accounting.yaml", &[&catch_all, &snippet]);
    manifests
}

#[tokio::test]
async fn the_report_accounts_for_every_ingress_groups_reasons_and_gates_ci() {
    let manifests = report_manifests();
    let report = shadow_report(&manifests, &[]).await;
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let report = text(&report);
    assert!(report.contains("2 catch-alls, 1 skipped"), "{report}");
    // Without shop/shop-tls here, shop's two hosts join pay: one group, each host under it.
    assert!(report.contains("### CertificateUnavailable (3 hosts)"), "{report}");
    assert!(
        report.contains("--shadow-tls pay.example.com=NAMESPACE/SECRET"),
        "{report}"
    );
    assert!(
        report.contains("kubectl -n shop annotate ingress pay shunt.dev/tls-secret=SECRET"),
        "{report}"
    );
    assert!(
        report.contains("| shop/default-only | qcloud | reachable by the load balancer's address only, not moved |  |"),
        "{report}"
    );
    assert!(
        report.contains("| shop/snippet | nginx | SnippetRejected: "),
        "{report}"
    );

    let json: Value = serde_json::from_str(&text(&shadow_report(&manifests, &["--json"]).await)).expect("JSON");
    let summary = &json["summary"];
    assert_eq!(
        (summary["catch_alls"].as_u64(), summary["skipped"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(summary["ingresses"], 7, "{summary}");
    assert_eq!(json["skipped"][0]["ingress"], "shop/snippet");

    let gated = shadow_report(&manifests, &["--fail-on-refused"]).await;
    assert!(!gated.status.success(), "refused hosts fail the gate");
    assert!(text(&gated).contains("# Shadow report"), "the report still prints");
    assert!(String::from_utf8_lossy(&gated.stderr).contains("--fail-on-refused"));

    let clean = Manifests::new();
    let blog = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tke/blog.yaml"))
        .expect("the blog example");
    clean.write_text("blog.yaml", &blog);
    let services: Vec<Vec<Value>> = ["web", "api"]
        .iter()
        .map(|name| node_port(mk_service_on_ports("shop", name, None, &[])))
        .collect();
    clean.write("services.yaml", &[&services[0], &services[1]]);
    let passed = shadow_report(&clean, &["--fail-on-refused"]).await;
    assert!(passed.status.success(), "{}", text(&passed));
}
