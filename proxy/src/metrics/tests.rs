//! The /metrics shape: which series exist when, and that removed routes and backends leave.

use std::{collections::BTreeMap, net::SocketAddr, time::Duration};

use hyper::StatusCode;
use prometheus_client::{encoding::text::encode, registry::Registry};

use super::*;
use crate::{
    publish::RoutePublisher,
    routes::spec::{BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec},
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
                endpoints: vec![endpoint],
            },
        );
        hosts.push(VirtualHostSpec {
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
        });
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
    route.record(StatusCode::OK, Duration::from_millis(3));
    route.upstream.stats.observe_latency(0.003);
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
fn an_idle_route_has_only_its_endpoint_gauge() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_spec(&["idle"]));
    let text = scrape(&registry);
    assert_eq!(
        lines_with(&text, "idle"),
        vec![r#"shunt_backend_endpoints{backend="ns/idle:80"} 1"#],
        "{text}"
    );
}

#[test]
fn a_served_route_counts_by_route_and_backend_without_a_route_histogram() {
    let (registry, mut publisher) = mk_publisher(MetricsOptions::default());
    publisher.publish(mk_spec(&["shop"]));
    serve_one(&publisher, "shop");
    serve_one(&publisher, "shop");
    let text = scrape(&registry);
    let lines = lines_with(&text, "shop");
    assert!(
        lines.contains(&r#"shunt_requests_total{route="shop.example.com/",ingress="ns/shop",code="2xx"} 2"#),
        "{text}"
    );
    assert!(
        lines.contains(&r#"shunt_backend_responses_total{backend="ns/shop:80",code="2xx"} 2"#),
        "{text}"
    );
    assert!(
        lines.contains(&r#"shunt_upstream_response_seconds_count{backend="ns/shop:80"} 2"#),
        "{text}"
    );
    assert!(
        lines.contains(&r#"shunt_upstream_connect_errors_total{backend="ns/shop:80"} 2"#),
        "{text}"
    );
    // Classes never seen stay out of the scrape.
    assert!(!text.contains(r#"code="5xx""#), "{text}");
    assert!(!text.contains("shunt_route_response_seconds"), "{text}");
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
        text.contains(r#"shunt_route_response_seconds_count{route="shop.example.com/",ingress="ns/shop"} 1"#),
        "{text}"
    );
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
    assert!(!lines_with(&scrape(&registry), "preview").is_empty());

    publisher.publish(mk_spec(&["stays"]));
    let text = scrape(&registry);
    assert_eq!(lines_with(&text, "preview"), Vec::<&str>::new(), "{text}");
    assert!(
        text.contains(r#"shunt_requests_total{route="stays.example.com/",ingress="ns/stays",code="2xx"} 1"#),
        "{text}"
    );

    // A request still holding the old table does not bring the series back.
    let route = old_table
        .lookup("preview.example.com", "/")
        .expect("routed in the old table");
    route.record(StatusCode::INTERNAL_SERVER_ERROR, Duration::from_millis(1));
    route.upstream.stats.observe_latency(0.001);
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
        backend.endpoints.push("127.0.0.2:80".parse().expect("socket address"));
    }
    publisher.publish(spec);
    serve_one(&publisher, "shop");
    let text = scrape(&registry);
    assert!(
        text.contains(r#"shunt_requests_total{route="shop.example.com/",ingress="ns/shop",code="2xx"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(r#"shunt_backend_responses_total{backend="ns/shop:80",code="2xx"} 2"#),
        "{text}"
    );
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
