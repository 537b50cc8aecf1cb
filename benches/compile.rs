//! `compile` over 10,000 Ingresses, 10,000 Services and 50,000 endpoints, and the table build
//! that publishing adds. `cargo bench -p shunt-controller --bench compile`

use std::{collections::BTreeMap, hint::black_box};

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::{
    api::{
        core::v1::{Service, ServicePort, ServiceSpec},
        discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice},
        networking::v1::{
            HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule, IngressServiceBackend,
            IngressSpec, ServiceBackendPort,
        },
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use shunt_controller::compile::{ClusterState, CompileOptions, compile};
use shunt_proxy::{metrics::ProxyMetrics, publish::RoutePublisher};

// The same allocator as the `shunt` binary, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const INGRESSES: usize = 10_000;
const ENDPOINTS_PER_SERVICE: usize = 5;

fn meta(namespace: &str, name: &str, labels: Option<BTreeMap<String, String>>) -> ObjectMeta {
    ObjectMeta {
        namespace: Some(namespace.into()),
        name: Some(name.into()),
        labels,
        ..Default::default()
    }
}

fn mk_path(path: &str, service: &str) -> HTTPIngressPath {
    HTTPIngressPath {
        path: Some(path.into()),
        path_type: "Prefix".into(),
        backend: IngressBackend {
            service: Some(IngressServiceBackend {
                name: service.into(),
                port: Some(ServiceBackendPort {
                    number: Some(80),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        },
    }
}

pub fn mk_state() -> ClusterState {
    let mut state = ClusterState::default();
    for i in 0..INGRESSES {
        let ns = format!("team-{}", i % 100);
        let name = format!("app-{i}");
        state.ingresses.push(Ingress {
            metadata: meta(&ns, &name, None),
            spec: Some(IngressSpec {
                ingress_class_name: Some("shunt".into()),
                rules: Some(vec![IngressRule {
                    host: Some(format!("{name}.example.com")),
                    http: Some(HTTPIngressRuleValue {
                        paths: vec![mk_path("/", &name), mk_path("/api", &name)],
                    }),
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
        state.services.push(Service {
            metadata: meta(&ns, &name, None),
            spec: Some(ServiceSpec {
                ports: Some(vec![ServicePort {
                    name: Some("http".into()),
                    port: 80,
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
        let labels = BTreeMap::from([("kubernetes.io/service-name".to_string(), name.clone())]);
        state.endpoint_slices.push(EndpointSlice {
            metadata: meta(&ns, &format!("{name}-abcde"), Some(labels)),
            address_type: "IPv4".into(),
            ports: Some(vec![EndpointPort {
                name: Some("http".into()),
                port: Some(8080),
                ..Default::default()
            }]),
            endpoints: (0..ENDPOINTS_PER_SERVICE)
                .map(|e| Endpoint {
                    addresses: vec![format!("10.{}.{}.{}", i / 250 % 250, i % 250, e + 1)],
                    conditions: Some(EndpointConditions {
                        ready: Some(true),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .collect(),
        });
    }
    state
}

fn bench_compile(c: &mut Criterion) {
    let state = mk_state();
    let options = CompileOptions::default();
    let compiled = compile(&state, &options);
    assert_eq!(compiled.table.hosts.len(), INGRESSES);
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics.first());
    let mut group = c.benchmark_group("compile");
    group.sample_size(10);
    group.bench_function("10k ingresses, 50k endpoints", |b| {
        b.iter(|| black_box(compile(black_box(&state), &options)))
    });
    group.bench_function("compile + publish (table build), 10k ingresses", |b| {
        let (mut publisher, _reader) = RoutePublisher::new(ProxyMetrics::detached());
        let mut flip = false;
        b.iter(|| {
            // Alternate two distinct tables so every publish really builds and swaps.
            flip = !flip;
            let mut table = compile(&state, &options).table;
            if flip {
                table.default_backend = table.backends.keys().next().cloned();
            }
            black_box(publisher.publish(table))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_compile);
criterion_main!(benches);
