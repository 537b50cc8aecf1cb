//! Recording one request's metrics, as the access log phase and the upstream send do on every request:
//! the route's counter (with its backend), the latency observations. Uses only the proxy's public
//! API, so the same file runs against older commits for a before/after.
//! `cargo bench -p shunt-proxy --bench record`

use std::{collections::BTreeMap, hint::black_box, net::SocketAddr, sync::Arc, time::Duration};

use criterion::{Criterion, criterion_group, criterion_main};
use http::StatusCode;
use shunt_proxy::{
    dataplane::{
        MetricsOptions, ProxyMetrics, Registry,
        internals::{Route, count},
    },
    publish::RoutePublisher,
    spec::{BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec},
};

const HOST: &str = "app-42.example.com";

fn mk_spec() -> TableSpec {
    let backend = "team-42/app-42:80".to_string();
    let endpoint: SocketAddr = "10.0.42.1:8080".parse().expect("socket address");
    TableSpec {
        hosts: vec![Arc::new(VirtualHostSpec {
            host: HostMatch::Exact(HOST.into()),
            paths: vec![PathSpec {
                path: "/".into(),
                kind: PathKind::Prefix,
                backend: backend.clone(),
                source: "team-42/app-42".into(),
                ssl_redirect: false,
                options: Default::default(),
            }],
            exclusive: false,
        })],
        backends: BTreeMap::from([(
            backend,
            BackendSpec {
                protocol: UpstreamProtocol::Http1,
                endpoints: [endpoint].into(),
                topology: Default::default(),
                tls: None,
            },
        )]),
        ..Default::default()
    }
}

/// A published route whose metrics are registered, as in `shunt serve`.
fn mk_route(options: MetricsOptions) -> (Registry, RoutePublisher, Arc<Route>) {
    let mut registry = Registry::default();
    let metrics = ProxyMetrics::register_with(&mut registry, options);
    let (mut publisher, reader) = RoutePublisher::new(metrics);
    publisher.publish(mk_spec());
    let route = reader.load().lookup(HOST, "/").expect("routed").clone();
    (registry, publisher, route)
}

fn record(c: &mut Criterion) {
    for (name, options) in [
        ("record_request", MetricsOptions::default()),
        (
            "record_request_per_route_latency",
            MetricsOptions {
                per_route_latency: true,
            },
        ),
    ] {
        let (_registry, _publisher, route) = mk_route(options);
        c.bench_function(name, |b| {
            b.iter(|| {
                route.upstream.stats.observe_latency(black_box(0.002));
                count(&route, black_box(StatusCode::OK), black_box(Duration::from_millis(3)));
            })
        });
    }
}

criterion_group!(benches, record);
criterion_main!(benches);
