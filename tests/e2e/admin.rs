//! The admin listener: `/healthz`, `/readyz`, `/routes` (the live table as JSON) and `/metrics`.

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

/// `shop/shop` on `shop.example.com` (`/` and `/health` to `web`, `/api` to the h2c `api` by port
/// name, `/empty` to a Service without endpoints, `/missing` to no Service) with `web` as default
/// backend, and `shop/blog` on `*.blog.example.com`.
struct Shop {
    web: [Backend; 2],
    api_port: RefusingPort,
    _manifests: Manifests,
    shunt: Shunt,
}

impl Shop {
    async fn serve() -> Shop {
        let web = [Backend::start("web1").await, Backend::start("web2").await];
        let api_port = RefusingPort::new();
        let shop = mk_ingress("shop", "shop")
            .rule(
                "shop.example.com",
                [
                    mk_path("/", "Prefix", "web", 80),
                    mk_path("/api", "Prefix", "api", "http"),
                    mk_path("/health", "Exact", "web", 80),
                    mk_path("/empty", "Prefix", "empty", 80),
                    mk_path("/missing", "Prefix", "missing", 80),
                ],
            )
            .default_backend("web", 80);
        let blog = mk_ingress("shop", "blog").rule("*.blog.example.com", [mk_path("/", "Prefix", "web", 80)]);
        let services = vec![
            mk_backend_service("shop", "web", None, &[&web[0], &web[1]]),
            mk_service_on_ports("shop", "api", Some("kubernetes.io/h2c"), &[api_port.port()]),
            mk_service_on_ports("shop", "empty", None, &[]),
        ];
        let (manifests, shunt) = serve(&[&shop, &blog, &services], &[]).await;
        Shop {
            web,
            api_port,
            _manifests: manifests,
            shunt,
        }
    }
}

/// Hosts, paths and endpoints in a fixed order, so tables compare regardless of how shunt sorts.
fn normalized(mut routes: Value) -> Value {
    let by = |key: &'static str| move |a: &Value, b: &Value| a[key].to_string().cmp(&b[key].to_string());
    if let Some(hosts) = routes["hosts"].as_array_mut() {
        hosts.sort_by(by("host"));
        for host in hosts {
            host["paths"]
                .as_array_mut()
                .into_iter()
                .for_each(|paths| paths.sort_by(by("path")));
        }
    }
    if let Some(backends) = routes["backends"].as_object_mut() {
        for backend in backends.values_mut() {
            backend["endpoints"]
                .as_array_mut()
                .into_iter()
                .for_each(|e| e.sort_by_key(Value::to_string));
        }
    }
    routes
}

#[tokio::test]
async fn health_and_readiness_answer_200() {
    let shop = Shop::serve().await;
    let healthz = shop.shunt.admin("/healthz").await;
    assert_eq!(healthz.status, StatusCode::OK, "{}", healthz.text());
    let readyz = shop.shunt.admin("/readyz").await;
    assert_eq!(readyz.status, StatusCode::OK, "{}", readyz.text());
}

#[tokio::test]
async fn routes_json_reflects_the_table() {
    let shop = Shop::serve().await;
    let path = |path: &str, kind: &str, backend: &str, source: &str| json!({"path": path, "kind": kind, "backend": backend, "source": source});
    let expected = json!({
        "hosts": [
            {"host": "shop.example.com", "paths": [
                path("/", "Prefix", "shop/web:80", "shop/shop"),
                path("/api", "Prefix", "shop/api:http", "shop/shop"),
                path("/health", "Exact", "shop/web:80", "shop/shop"),
                path("/empty", "Prefix", "shop/empty:80", "shop/shop"),
            ]},
            {"host": "*.blog.example.com", "paths": [path("/", "Prefix", "shop/web:80", "shop/blog")]},
        ],
        "default_backend": "shop/web:80",
        "backends": {
            "shop/api:http": {"protocol": "h2c", "endpoints": [format!("127.0.0.1:{}", shop.api_port.port())]},
            "shop/empty:80": {"protocol": "http1", "endpoints": []},
            "shop/web:80": {"protocol": "http1", "endpoints": [
                format!("127.0.0.1:{}", shop.web[0].port()),
                format!("127.0.0.1:{}", shop.web[1].port()),
            ]},
        },
        "tls": {"hosts": {}, "default": null, "certificates": {}},
    });
    assert_eq!(normalized(shop.shunt.routes().await), normalized(expected));
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status_class() {
    let shop = Shop::serve().await;
    for _ in 0..3 {
        assert_eq!(shop.shunt.get("shop.example.com", "/cart").await.status, StatusCode::OK);
    }
    assert_eq!(
        shop.shunt.get("shop.example.com", "/empty").await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(shop.shunt.get("www.blog.example.com", "/").await.status, StatusCode::OK);

    let metrics = shop.shunt.metrics().await;
    let requests = |route: &str, backend: &str, code: &str| {
        sample(
            &metrics,
            "shunt_requests_total",
            &[("route", route), ("backend", backend), ("code", code)],
        )
    };
    assert_eq!(
        requests("shop.example.com/", "shop/web:80", "2xx"),
        Some(3.0),
        "{metrics}"
    );
    assert_eq!(
        requests("shop.example.com/empty", "shop/empty:80", "5xx"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        requests("*.blog.example.com/", "shop/web:80", "2xx"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        requests("shop.example.com/health", "shop/web:80", "2xx").unwrap_or(0.0),
        0.0,
        "{metrics}"
    );
    // Each backend's response time summed, for its mean; the upstream distribution is global.
    let seconds = |backend: &str| {
        sample(
            &metrics,
            "shunt_backend_response_seconds_total",
            &[("backend", backend)],
        )
    };
    assert!(seconds("shop/web:80").is_some_and(|sum| sum > 0.0), "{metrics}");
    assert!(seconds("shop/empty:80").is_some(), "{metrics}");
    assert_eq!(
        sample(&metrics, "shunt_upstream_response_seconds_count", &[]),
        Some(4.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn requests_no_route_matches_are_counted_apart() {
    let (_manifests, shunt) = serve(&[&mk_ingress("shop", "nothing")], &[]).await;
    for _ in 0..2 {
        assert_eq!(
            shunt.get("nowhere.example.org", "/").await.status,
            StatusCode::NOT_FOUND
        );
    }
    let metrics = shunt.metrics().await;
    let unmatched = sample(&metrics, "shunt_requests_total", &[("route", ""), ("code", "4xx")]);
    assert_eq!(unmatched, Some(2.0), "{metrics}");
}

#[tokio::test]
async fn metrics_report_publishes_endpoints_and_diagnostics() {
    let shop = Shop::serve().await;
    let metrics = shop.shunt.metrics().await;
    let publishes = sample(&metrics, "shunt_table_publishes_total", &[]);
    assert!(publishes.is_some_and(|count| count >= 1.0), "{metrics}");
    // web's two endpoints and api's one.
    assert_eq!(sample(&metrics, "shunt_endpoints", &[]), Some(3.0), "{metrics}");
    let without_endpoints =
        |backend: &str| sample(&metrics, "shunt_backend_without_endpoints", &[("backend", backend)]);
    assert_eq!(without_endpoints("shop/empty:80"), Some(1.0), "{metrics}");
    assert_eq!(without_endpoints("shop/web:80"), None, "{metrics}");
    let diagnostics = |reason: &str| sample(&metrics, "shunt_ingress_diagnostics", &[("reason", reason)]);
    assert_eq!(diagnostics("MissingService"), Some(1.0), "{metrics}");
    assert_eq!(diagnostics("NoEndpoints"), Some(1.0), "{metrics}");
}

#[tokio::test]
async fn metrics_are_gzipped_for_a_scraper_that_accepts_gzip() {
    let (_manifests, shunt) = serve(&[&mk_ingress("shop", "nothing")], &[]).await;
    let url = format!("http://{}/metrics", shunt.admin);
    // curl --compressed asks for gzip and decodes the body; --include shows the headers.
    let (gzipped, status) = curl(&["--compressed", "--include", &url]).await;
    assert_eq!(status, "200 1.1", "{gzipped}");
    let head = |reply: &str| reply.split("\r\n\r\n").next().unwrap_or("").to_ascii_lowercase();
    assert!(head(&gzipped).contains("content-encoding: gzip"), "{gzipped}");
    assert!(gzipped.contains("\nshunt_table_publishes_total "), "{gzipped}");
    assert!(gzipped.ends_with("# EOF\n"), "{gzipped}");

    let (plain, status) = curl(&["--include", &url]).await;
    assert_eq!(status, "200 1.1", "{plain}");
    assert!(!head(&plain).contains("content-encoding"), "{plain}");
    assert!(plain.contains("\nshunt_table_publishes_total "), "{plain}");
}

#[tokio::test]
async fn the_admin_listeners_own_connection_budget_shows_in_its_metrics() {
    use std::time::Duration;
    use tokio::{io::AsyncReadExt, net::TcpStream};

    // The admin listener's budget (256 connections, apart from the proxy's) is spent by idle sockets.
    const ADMIN_BUDGET: usize = 256;
    let (_manifests, shunt) = serve(&[&mk_ingress("shop", "nothing")], &[]).await;
    let mut idle = Vec::with_capacity(ADMIN_BUDGET);
    for _ in 0..ADMIN_BUDGET {
        idle.push(TcpStream::connect(shunt.admin).await.expect("connect"));
    }
    // Accepts are asynchronous: retry until one beyond the budget is closed at accept.
    eventually(
        "a connection beyond the admin budget closed",
        Duration::from_secs(10),
        async || {
            let mut extra = TcpStream::connect(shunt.admin).await.ok()?;
            let mut buf = [0u8; 1];
            match tokio::time::timeout(Duration::from_millis(300), extra.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => Some(()),
                _ => None,
            }
        },
    )
    .await;
    drop(idle);

    // Until shunt sees the idle sockets close, a scrape may itself be refused.
    let metrics = eventually(
        "a scrape once the idle sockets are gone",
        Duration::from_secs(10),
        async || {
            let reply = shunt.try_admin("/metrics").await.ok()?;
            let metrics = reply.text();
            (reply.status == StatusCode::OK && sample(&metrics, "shunt_admin_connections", &[]) <= Some(2.0))
                .then_some(metrics)
        },
    )
    .await;
    assert!(
        sample(&metrics, "shunt_admin_connections_rejected_total", &[]) >= Some(1.0),
        "{metrics}"
    );
    // The scrape's own connection is open while the scrape is encoded.
    assert!(
        sample(&metrics, "shunt_admin_connections", &[]) >= Some(1.0),
        "{metrics}"
    );
    // The proxy's listeners saw none of it.
    assert_eq!(
        sample(&metrics, "shunt_client_connections_rejected_total", &[]),
        Some(0.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn metrics_show_upstream_connections_kept_alive_and_reused() {
    let web = [Backend::start("web1").await, Backend::start("web2").await];
    let shop = mk_ingress("shop", "shop").rule("shop.example.com", [mk_path("/", "Prefix", "web", 80)]);
    let services = vec![mk_backend_service("shop", "web", None, &[&web[0], &web[1]])];
    let (_manifests, shunt) = serve(&[&shop, &services], &["--threads", "1"]).await;
    const REQUESTS: u32 = 12;
    for _ in 0..REQUESTS {
        assert_eq!(shunt.get("shop.example.com", "/cart").await.status, StatusCode::OK);
    }
    let metrics = shunt.metrics().await;
    let connects = sample(&metrics, "shunt_upstream_connects_total", &[]).expect(&metrics);
    let reuses = sample(&metrics, "shunt_upstream_connection_reuses_total", &[]).expect(&metrics);
    assert_eq!(connects + reuses, f64::from(REQUESTS), "{metrics}");
    // One worker, two endpoints, one request at a time: one connection to each at most.
    assert!(
        connects <= 2.0,
        "{connects} connects for {REQUESTS} requests:\n{metrics}"
    );
    // Every dial succeeded, and the pods speak HTTP/1.1: each one an HTTP/1 connection opened.
    let opened = |protocol| {
        sample(
            &metrics,
            "shunt_upstream_connections_opened_total",
            &[("protocol", protocol)],
        )
    };
    assert_eq!(opened("http1"), Some(connects), "{metrics}");
    assert_eq!(opened("h2c"), Some(0.0), "{metrics}");
}
