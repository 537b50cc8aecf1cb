//! Host matching: exact (case-insensitive, port ignored), then `*.` wildcards of one label, then
//! rules without a host, then `spec.defaultBackend`, else 404.

use http::StatusCode;

use crate::support::*;

/// `shop.example.com`, `*.blog.example.com` and `exact.blog.example.com`, each `Prefix /` to the
/// backend of that name; optionally a host-less rule (`any`) and a default backend (`fallback`).
struct Hosts(Site);

impl Hosts {
    async fn serve(hostless: bool, default: bool) -> Hosts {
        let mut ingress = mk_ingress("web", "hosts")
            .rule("shop.example.com", [mk_path("/", "Prefix", "shop", 80)])
            .rule("*.blog.example.com", [mk_path("/", "Prefix", "blog", 80)])
            .rule("exact.blog.example.com", [mk_path("/", "Prefix", "exact", 80)])
            .rule("api.example.com", [mk_path("/v1", "Exact", "shop", 80)]);
        if hostless {
            ingress = ingress.rule("", [mk_path("/", "Prefix", "any", 80)]);
        }
        if default {
            ingress = ingress.default_backend("fallback", 80);
        }
        let names = ["shop", "blog", "exact", "any", "fallback"];
        Hosts(Site::start("web", &names, &[&ingress], &[]).await)
    }

    async fn backend_for(&self, host: &str, path: &str) -> String {
        self.0.backend_for(host, path).await
    }

    async fn assert_not_found(&self, host: &str) {
        let reply = self.0.shunt.get(host, "/").await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "Host {host}: {}", reply.text());
    }
}

#[tokio::test]
async fn exact_hosts_match_case_insensitively_and_ignore_the_port() {
    let hosts = Hosts::serve(false, false).await;
    assert_eq!(hosts.backend_for("shop.example.com", "/").await, "shop");
    assert_eq!(hosts.backend_for("SHOP.Example.COM", "/").await, "shop");
    assert_eq!(hosts.backend_for("shop.example.com:8080", "/").await, "shop");
    assert_eq!(hosts.backend_for("Shop.Example.Com:80", "/cart").await, "shop");
}

#[tokio::test]
async fn a_wildcard_host_matches_exactly_one_label() {
    let hosts = Hosts::serve(false, false).await;
    assert_eq!(hosts.backend_for("www.blog.example.com", "/").await, "blog");
    assert_eq!(hosts.backend_for("WWW.Blog.Example.com:8080", "/").await, "blog");
    hosts.assert_not_found("a.b.blog.example.com").await;
    hosts.assert_not_found("blog.example.com").await;
}

#[tokio::test]
async fn an_exact_host_beats_a_wildcard_that_also_matches() {
    let hosts = Hosts::serve(true, true).await;
    assert_eq!(hosts.backend_for("exact.blog.example.com", "/").await, "exact");
    assert_eq!(hosts.backend_for("other.blog.example.com", "/").await, "blog");
}

#[tokio::test]
async fn rules_without_a_host_catch_hosts_no_rule_names() {
    let hosts = Hosts::serve(true, false).await;
    assert_eq!(hosts.backend_for("unknown.example.org", "/anything").await, "any");
    assert_eq!(hosts.backend_for("a.b.blog.example.com", "/").await, "any");
    assert_eq!(hosts.backend_for("shop.example.com", "/").await, "shop");
}

#[tokio::test]
async fn the_default_backend_serves_requests_no_rule_matches() {
    let hosts = Hosts::serve(false, true).await;
    assert_eq!(hosts.backend_for("unknown.example.org", "/").await, "fallback");
    assert_eq!(hosts.backend_for("api.example.com", "/v2").await, "fallback");
    assert_eq!(hosts.backend_for("api.example.com", "/v1").await, "shop");
}

#[tokio::test]
async fn a_request_no_rule_matches_gets_404_naming_the_host() {
    let hosts = Hosts::serve(false, false).await;
    let reply = hosts.0.shunt.get("nowhere.example.org", "/").await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(
        reply.text().trim(),
        r#"404 Not Found: no route for host "nowhere.example.org""#
    );
    hosts.assert_not_found("api.example.com").await;
}

#[tokio::test]
async fn an_http10_request_without_host_matches_rules_without_a_host() {
    let hosts = Hosts::serve(true, false).await;
    let answer = raw(hosts.0.shunt.http, b"GET /old-client HTTP/1.0\r\n\r\n").await;
    let status_line = answer.lines().next().unwrap_or_default();
    assert!(status_line.contains(" 200 "), "expected 200, got {answer:?}");
    assert!(
        answer.contains(r#""backend":"any""#),
        "the host-less rule answered: {answer:?}"
    );
}
