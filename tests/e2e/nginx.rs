//! The nginx profile end to end: `examples/nginx` served by `shunt serve --shadow-class nginx`
//! in front of echo backends, real HTTP requests, `/shadow`, and `shunt shadow report` and
//! `shunt dns` over the same files.

use std::process::Output;

use http::{StatusCode, header};
use serde_json::Value;

use crate::support::*;

struct Nginx {
    _backends: Vec<Backend>,
    manifests: Manifests,
    shunt: Shunt,
}

async fn start_nginx() -> Nginx {
    let manifests = Manifests::from_example("nginx");
    let backends = vec![Backend::start("web").await, Backend::start("api").await];
    let services: Vec<_> = backends
        .iter()
        .map(|b| mk_backend_service("shop", &b.name, None, &[b]))
        .collect();
    // Replaces the example's Services with ones whose endpoints are the echo backends.
    manifests.write("services.yaml", &[&services]);
    let shunt = Shunt::start(manifests.path(), &["--shadow-class", "nginx"]).await;
    Nginx {
        _backends: backends,
        manifests,
        shunt,
    }
}

async fn run_shunt(manifests: &Manifests, args: &[&str]) -> String {
    let output: Output = tokio::process::Command::from(crate::support::launch::shunt())
        .args(args)
        .arg("--manifests")
        .arg(manifests.path())
        .args(["--shadow-class", "nginx"])
        .output()
        .await
        .expect("shunt runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[tokio::test]
async fn nginx_paths_and_the_ssl_redirect_answer_as_ingress_nginx_does() {
    let nginx = start_nginx().await;
    let redirected = nginx.shunt.get("shop.example.com", "/api/v1?x=1").await;
    assert_eq!(redirected.status, StatusCode::PERMANENT_REDIRECT);
    let location = redirected.headers.get(header::LOCATION).and_then(|v| v.to_str().ok());
    assert_eq!(location, Some("https://shop.example.com/api/v1?x=1"));
    // cert-manager's solver path is exempt (no-tls-redirect-locations).
    let solver = nginx
        .shunt
        .get("shop.example.com", "/.well-known/acme-challenge/abc")
        .await;
    assert_eq!(solver.status, StatusCode::OK);
    assert_eq!(solver.backend(), "web");
    // One '/' ending the target is dropped, as lua_ingress.lua does.
    let slash = nginx.shunt.get("shop.example.com", "/docs/").await;
    let location = slash.headers.get(header::LOCATION).and_then(|v| v.to_str().ok());
    assert_eq!(location, Some("https://shop.example.com/docs"));
    // A refused host (auth-url with $host) is not routed at all: no caller skips its auth check.
    assert_eq!(
        nginx.shunt.get("admin.example.com", "/").await.status,
        StatusCode::NOT_FOUND
    );
    // ingress-nginx rejects an Ingress with a snippet whole by default: so does shunt.
    assert_eq!(
        nginx.shunt.get("legacy.example.com", "/").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_pod_sees_ingress_nginxs_fields_and_https_answers_carry_hsts() {
    let nginx = start_nginx().await;
    let request = http::Request::builder()
        .uri("/api/v1?x=1")
        .header(header::HOST, "shop.example.com")
        .header("x-forwarded-for", "203.0.113.9")
        .header("proxy", "http://attacker:3128")
        .body(Default::default())
        .expect("a request");
    let reply = TlsClient::any_certificate()
        .send(nginx.shunt.https, Some("shop.example.com"), request)
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.backend(), "api");
    assert_eq!(
        reply
            .headers
            .get(header::STRICT_TRANSPORT_SECURITY)
            .and_then(|v| v.to_str().ok()),
        Some("max-age=31536000; includeSubDomains")
    );
    assert!(reply.headers.get(header::SERVER).is_none());
    let seen = |name: &str| reply.seen_header(name);
    assert_eq!(seen("x-forwarded-for").as_deref(), Some("127.0.0.1"));
    assert_eq!(seen("x-original-forwarded-for").as_deref(), Some("203.0.113.9"));
    assert_eq!(seen("x-real-ip").as_deref(), Some("127.0.0.1"));
    assert_eq!(seen("x-forwarded-host").as_deref(), Some("shop.example.com"));
    assert_eq!(seen("x-forwarded-port").as_deref(), Some("443"));
    for name in ["x-forwarded-proto", "x-forwarded-scheme", "x-scheme"] {
        assert_eq!(seen(name).as_deref(), Some("https"), "{name}");
    }
    assert_eq!(seen("x-request-id").map(|id| id.len()), Some(32));
    assert_eq!(seen("forwarded"), None);
    assert_eq!(seen("proxy"), None);
}

#[tokio::test]
async fn a_body_over_ingress_nginxs_1m_default_gets_413() {
    let nginx = start_nginx().await;
    let post = |len: usize| {
        http::Request::post("/api")
            .header(header::HOST, "shop.example.com")
            .body(full(vec![b'x'; len]))
            .expect("a request")
    };
    let client = TlsClient::any_certificate();
    let sni = Some("shop.example.com");
    assert_eq!(
        client.send(nginx.shunt.https, sni, post(1 << 20)).await.status,
        StatusCode::OK
    );
    let over = client.send(nginx.shunt.https, sni, post((1 << 20) + 1)).await;
    assert_eq!(over.status, StatusCode::PAYLOAD_TOO_LARGE);
    // Over plain HTTP the limit answers before the redirect, as nginx checks it first.
    assert_eq!(
        nginx.shunt.send(post((1 << 20) + 1)).await.status,
        StatusCode::PAYLOAD_TOO_LARGE
    );
}

#[tokio::test]
async fn shadow_and_the_report_say_why_each_nginx_host_stays_on_the_load_balancer() {
    let nginx = start_nginx().await;
    let shadow: Value = nginx.shunt.admin("/shadow").await.json();
    assert_eq!(shadow["profile"], "nginx");
    assert_eq!(shadow["summary"]["hosts"], 2);
    assert_eq!(shadow["summary"]["identical"], 1);
    assert_eq!(shadow["summary"]["refused"], 1);
    assert_eq!(shadow["classes"]["nginx"]["hosts"], 2);
    let report = run_shunt(&nginx.manifests, &["shadow", "report"]).await;
    assert!(
        report.contains("4 Ingresses, 2 hosts: 1 identical, 1 refused; 0 catch-alls, 1 skipped"),
        "{report}"
    );
    assert!(
        report.contains("- admin.example.com (shop/admin): nginx.ingress.kubernetes.io/auth-url\n"),
        "{report}"
    );
    let json: Value = serde_json::from_str(&run_shunt(&nginx.manifests, &["shadow", "report", "--json"]).await)
        .expect("a JSON document");
    assert_eq!(json["summary"], shadow["summary"]);
    let dns = run_shunt(&nginx.manifests, &["dns", "--publish-service", "shunt-system/shunt"]).await;
    assert!(dns.contains("# refused admin.example.com: ShadowRefused:"), "{dns}");
    assert!(!dns.contains("rewrite name exact admin.example.com"), "{dns}");
    assert!(dns.contains("shop.example.com"), "{dns}");
    assert!(!dns.contains("legacy.example.com"), "{dns}");
}

#[tokio::test]
async fn a_public_allowlist_answers_403_to_an_in_cluster_caller_as_ingress_nginx_does() {
    let guarded = mk_ingress("shop", "guarded")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/allowlist-source-range", "203.0.113.0/24")
        .rule("guarded.example.com", [mk_path("/", "Prefix", "web", 80)]);
    let denied = mk_ingress("shop", "denied")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/denylist-source-range", "0.0.0.0/0,::/0")
        .rule("denied.example.com", [mk_path("/", "Prefix", "web", 80)]);
    let open = mk_ingress("shop", "open")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/denylist-source-range", "203.0.113.0/24")
        .rule("open.example.com", [mk_path("/", "Prefix", "web", 80)]);
    let site = Site::start(
        "shop",
        &["web"],
        &[&guarded, &denied, &open],
        &["--shadow-class", "nginx"],
    )
    .await;
    // The caller (a pod; here 127.0.0.1) is in no public range: refused by the allowlist and by
    // a denylist of everything, admitted past a public denylist.
    assert_eq!(
        site.shunt.get("guarded.example.com", "/").await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        site.shunt.get("denied.example.com", "/").await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(site.shunt.get("open.example.com", "/").await.backend(), "web");
    let shadow: Value = site.shunt.admin("/shadow").await.json();
    assert_eq!(shadow["summary"]["identical"], 3, "{shadow}");
}
