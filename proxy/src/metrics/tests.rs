//! The /metrics shape: which series exist when, and that removed routes and backends leave.

use std::{collections::BTreeMap, net::SocketAddr, time::Duration};

use hyper::StatusCode;
use prometheus_client::{encoding::text::encode, registry::Registry};

use super::*;
use crate::{
    publish::RoutePublisher,
    spec::{BackendSpec, HostMatch, PathKind, PathSpec, RedirectSpec, TableSpec, UpstreamProtocol, VirtualHostSpec},
};

/// One host per app, `{app}.example.com/` to backend `ns/{app}:80` with one endpoint.
fn mk_spec(apps: &[&str]) -> TableSpec {
    let mut backends = BTreeMap::new();
    let mut hosts = Vec::new();
    for (index, app) in apps.iter().enumerate() {
        let backend = format!("ns/{app}:80");
        let endpoint: SocketAddr = format!("127.0.0.1:{}", 8000 + index).parse().expect("socket address");
        backends.insert(
            backend.clone(),
            BackendSpec {
                protocol: UpstreamProtocol::Http1,
                endpoints: [endpoint].into(),
                topology: Default::default(),
                tls: None,
            },
        );
        hosts.push(Arc::new(VirtualHostSpec {
            host: HostMatch::from_rule_host(&format!("{app}.example.com")),
            paths: vec![PathSpec {
                path: "/".into(),
                kind: PathKind::Prefix,
                backend,
                source: format!("ns/{app}"),
                ssl_redirect: false,
                options: Default::default(),
            }],
            exclusive: false,
        }));
    }
    TableSpec {
        hosts,
        backends,
        ..Default::default()
    }
}

fn mk_publisher(options: MetricsOptions) -> (Registry, RoutePublisher) {
    let mut registry = Registry::default();
    let metrics = ProxyMetrics::register_with(&mut registry, options);
    let (publisher, _reader) = RoutePublisher::new(metrics);
    (registry, publisher)
}

/// Sends one 200 through `app`'s route, the way the proxy records it.
fn serve_one(publisher: &RoutePublisher, app: &str) {
    let table = Arc::clone(&publisher.reader().load());
    let route = table
        .lookup(&format!("{app}.example.com"), "/")
        .unwrap_or_else(|| panic!("{app} is routed"));
    route.upstream.stats.observe_latency(0.002);
    crate::proxy::count(route, StatusCode::OK, Duration::from_millis(3));
    route.upstream.stats.connect_error();
}

fn scrape(registry: &Registry) -> String {
    let mut text = String::new();
    encode(&mut text, registry).expect("encoding to a string");
    text
}

/// The sample lines (no comments) that mention `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|line| !line.starts_with('#') && line.contains(needle))
        .collect()
}

#[test]
fn an_idle_route_adds_no_series() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_spec(&["idle"]));
    let text = scrape(&registry);
    assert_eq!(lines_with(&text, "idle"), Vec::<&str>::new(), "{text}");
    assert!(text.contains("\nshunt_endpoints 1\n"), "{text}");
}

/// Scrapes `registry`: the backends listed without endpoints, and the endpoint count.
fn assert_without_endpoints(registry: &Registry, listed: &[&str], endpoints: usize) {
    let text = scrape(registry);
    let expected: Vec<String> = listed
        .iter()
        .map(|backend| format!(r#"shunt_backend_without_endpoints{{backend="{backend}"}} 1"#))
        .collect();
    assert_eq!(lines_with(&text, "shunt_backend_without_endpoints"), expected, "{text}");
    assert!(text.contains(&format!("\nshunt_endpoints {endpoints}\n")), "{text}");
}

#[test]
fn a_backend_without_endpoints_is_listed_until_it_has_some() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    let mut spec = mk_spec(&["empty", "full"]);
    spec.backends.get_mut("ns/empty:80").expect("a backend").endpoints = [].into();
    publisher.publish(spec);
    assert_without_endpoints(&registry, &["ns/empty:80"], 1);

    publisher.publish(mk_spec(&["empty", "full"]));
    assert_without_endpoints(&registry, &[], 2);

    // The other way: losing the last endpoint lists a backend; a count that changes above zero does not.
    let mut spec = mk_spec(&["empty", "full"]);
    spec.backends.get_mut("ns/full:80").expect("a backend").endpoints = [].into();
    let two: [SocketAddr; 2] = ["127.0.0.1:8000", "127.0.0.1:9000"].map(|addr| addr.parse().expect("socket address"));
    spec.backends.get_mut("ns/empty:80").expect("a backend").endpoints = two.into();
    publisher.publish(spec);
    assert_without_endpoints(&registry, &["ns/full:80"], 2);

    // A listed backend that leaves the table leaves the list.
    publisher.publish(mk_spec(&["empty"]));
    assert_without_endpoints(&registry, &[], 1);
}

#[test]
fn a_served_route_counts_by_route_and_backend_without_a_route_histogram() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_spec(&["shop"]));
    serve_one(&publisher, "shop");
    serve_one(&publisher, "shop");
    let text = scrape(&registry);
    assert_eq!(
        lines_with(&text, "shop"),
        vec![
            r#"shunt_requests_total{route="shop.example.com/",backend="ns/shop:80",code="2xx"} 2"#,
            r#"shunt_backend_response_seconds_total{backend="ns/shop:80"} 0.006"#,
            r#"shunt_upstream_connect_errors_total{backend="ns/shop:80"} 2"#,
        ],
        "{text}"
    );
    // The upstream latency distribution is global by default.
    assert!(text.contains("\nshunt_upstream_response_seconds_count 2\n"), "{text}");
    assert!(!text.contains("shunt_route_response_seconds"), "{text}");
}

#[test]
fn connections_opened_are_counted_by_the_protocol_pods_speak_not_by_backend() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_spec(&["shop", "cart"]));
    let table = Arc::clone(&publisher.reader().load());
    let stats = |host| &table.lookup(host, "/").expect("routed").upstream.stats;
    stats("shop.example.com").connection_opened(UpstreamProtocol::Http1);
    stats("cart.example.com").connection_opened(UpstreamProtocol::Http1);
    stats("cart.example.com").connection_opened(UpstreamProtocol::H2c);
    let text = scrape(&registry);
    // A family's series come out in no set order.
    let mut opened = lines_with(&text, "shunt_upstream_connections_opened_total{");
    opened.sort_unstable();
    assert_eq!(
        opened,
        vec![
            r#"shunt_upstream_connections_opened_total{protocol="h2-tls"} 0"#,
            r#"shunt_upstream_connections_opened_total{protocol="h2c"} 1"#,
            r#"shunt_upstream_connections_opened_total{protocol="http1"} 2"#,
            r#"shunt_upstream_connections_opened_total{protocol="https"} 0"#,
        ],
        "{text}"
    );
    assert_eq!(stats("shop.example.com").connections_opened(UpstreamProtocol::H2c), 1);
}

#[test]
fn per_route_latency_is_a_histogram_per_route_when_asked_for() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions {
        per_route_latency: true,
    });
    publisher.publish(mk_spec(&["shop"]));
    serve_one(&publisher, "shop");
    let text = scrape(&registry);
    assert!(
        text.contains(r#"shunt_route_response_seconds_count{route="shop.example.com/",backend="ns/shop:80"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"shunt_route_response_seconds_bucket{le="0.004",route="shop.example.com/",backend="ns/shop:80"} 1"#
        ),
        "{text}"
    );
}

#[test]
fn a_redirect_counts_for_its_route_and_no_backend() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    let mut spec = mk_spec(&["old"]);
    Arc::make_mut(&mut Arc::make_mut(&mut spec.hosts[0]).paths[0].options).redirect = Some(RedirectSpec {
        code: 301,
        scheme: None,
        host: Some("new.example.com".into()),
        port: None,
        path: None,
        drop_query: false,
        location: None,
        replace_prefix: None,
        rewritten: false,
        www: false,
    });
    publisher.publish(spec);
    serve_one(&publisher, "old");
    let text = scrape(&registry);
    assert_eq!(
        lines_with(&text, "old.example.com"),
        vec![r#"shunt_requests_total{route="old.example.com/",backend="",code="2xx"} 1"#],
        "{text}"
    );
    assert!(!text.contains("shunt_backend_response_seconds_total{"), "{text}");
}

#[test]
fn a_removed_route_and_its_backend_leave_the_scrape_at_publish() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions {
        per_route_latency: true,
    });
    publisher.publish(mk_spec(&["stays", "preview"]));
    serve_one(&publisher, "stays");
    serve_one(&publisher, "preview");
    let old_table = Arc::clone(&publisher.reader().load());
    // Its counter, its 19-line histogram, its backend's latency sum and connect errors.
    assert_eq!(lines_with(&scrape(&registry), "preview").len(), 22);

    publisher.publish(mk_spec(&["stays"]));
    let text = scrape(&registry);
    assert_eq!(lines_with(&text, "preview"), Vec::<&str>::new(), "{text}");
    assert!(
        text.contains(r#"shunt_requests_total{route="stays.example.com/",backend="ns/stays:80",code="2xx"} 1"#),
        "{text}"
    );

    // A request still holding the old table does not bring the series back.
    let route = old_table
        .lookup("preview.example.com", "/")
        .expect("routed in the old table");
    crate::proxy::count(route, StatusCode::INTERNAL_SERVER_ERROR, Duration::from_millis(1));
    route.upstream.stats.connect_error();
    let text = scrape(&registry);
    assert_eq!(lines_with(&text, "preview"), Vec::<&str>::new(), "{text}");
}

#[test]
fn a_route_that_stays_keeps_counting_across_publishes() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_spec(&["shop"]));
    serve_one(&publisher, "shop");
    // New endpoints for the same backend: a new Upstream, the same counters.
    let mut spec = mk_spec(&["shop"]);
    for backend in spec.backends.values_mut() {
        let mut endpoints = backend.endpoints.to_vec();
        endpoints.push("127.0.0.2:80".parse().expect("socket address"));
        backend.endpoints = endpoints.into();
    }
    publisher.publish(spec);
    serve_one(&publisher, "shop");
    let text = scrape(&registry);
    assert!(
        text.contains(r#"shunt_requests_total{route="shop.example.com/",backend="ns/shop:80",code="2xx"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(r#"shunt_backend_response_seconds_total{backend="ns/shop:80"} 0.006"#),
        "{text}"
    );
    assert!(text.contains("\nshunt_endpoints 2\n"), "{text}");
}

#[test]
fn status_classes_are_counted_apart() {
    let stats = RouteStats::detached();
    for status in [
        StatusCode::OK,
        StatusCode::NOT_FOUND,
        StatusCode::NOT_FOUND,
        StatusCode::BAD_GATEWAY,
    ] {
        stats.record(status, Duration::ZERO);
    }
    assert_eq!(
        (stats.count(2), stats.count(4), stats.count(5), stats.count(3)),
        (1, 2, 1, 0)
    );
}

/// 10k routes named as benches/scale.sh names them.
fn mk_scale_spec(count: usize) -> TableSpec {
    let mut backends = BTreeMap::new();
    let mut hosts = Vec::new();
    for i in 0..count {
        let (namespace, name) = (format!("team-{}", i % 100), format!("app-{i}"));
        let backend = format!("{namespace}/{name}:80");
        let endpoints = (1..=5)
            .map(|k| SocketAddr::from(([10, (i / 250 % 250) as u8, (i % 250) as u8, k], 8080)))
            .collect();
        backends.insert(
            backend.clone(),
            BackendSpec {
                protocol: UpstreamProtocol::Http1,
                endpoints,
                topology: Default::default(),
                tls: None,
            },
        );
        hosts.push(Arc::new(VirtualHostSpec {
            host: HostMatch::from_rule_host(&format!("{name}.example.com")),
            paths: vec![PathSpec {
                path: "/".into(),
                kind: PathKind::Prefix,
                backend,
                source: format!("{namespace}/{name}"),
                ssl_redirect: false,
                options: Default::default(),
            }],
            exclusive: false,
        }));
    }
    TableSpec {
        hosts,
        backends,
        ..Default::default()
    }
}

/// Serves one request on each of `count` scale routes, the way the proxy records it, and holds
/// an upstream connection to each backend.
fn serve_scale(publisher: &RoutePublisher, count: usize) -> Vec<Gauge> {
    let table = Arc::clone(&publisher.reader().load());
    (0..count)
        .map(|i| {
            let route = table.lookup(&format!("app-{i}.example.com"), "/").expect("routed");
            route.upstream.stats.observe_latency(0.002);
            crate::proxy::count(route, StatusCode::OK, Duration::from_millis(3));
            let connection = route.upstream.stats.connections();
            connection.inc();
            connection
        })
        .collect()
}

#[test]
fn metrics_of_ten_thousand_active_routes_fit_in_two_megabytes() {
    const ROUTES: usize = 10_000;
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_scale_spec(ROUTES));
    let idle = scrape(&registry);
    let _connections = serve_scale(&publisher, ROUTES);
    let active = scrape(&registry);
    if let Ok(dir) = std::env::var("SHUNT_METRICS_DUMP") {
        std::fs::write(format!("{dir}/metrics-idle.txt"), &idle).expect("writing the idle scrape");
        std::fs::write(format!("{dir}/metrics-active.txt"), &active).expect("writing the active scrape");
    }
    // Every route served: one counter line per route and one latency sum per backend.
    assert_eq!(lines_with(&active, "shunt_requests_total{").len(), ROUTES);
    assert_eq!(
        lines_with(&active, "shunt_backend_response_seconds_total{").len(),
        ROUTES
    );
    assert!(idle.len() < 4_000, "{} bytes idle", idle.len());
    assert!(
        active.len() <= 2_000_000,
        "{} bytes with every route active",
        active.len()
    );
    // What Prometheus downloads: it always sends `Accept-Encoding: gzip`.
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::ACCEPT_ENCODING, http::HeaderValue::from_static("gzip"));
    let gzipped = super::scrape::scrape(&registry, &headers).expect("encoded");
    println!(
        "idle {} bytes, active {} bytes, gzipped {} bytes",
        idle.len(),
        active.len(),
        gzipped.body.len()
    );
    assert!(
        gzipped.body.len() < active.len() / 8,
        "{} bytes gzipped",
        gzipped.body.len()
    );
}
