//! `compile` over 10,000 Ingresses, 10,000 Services and 50,000 endpoints, the table build
//! that publishing adds, and a one-object edit republished next to a live table, by the full
//! compile and by the incremental one (`shunt run` and `serve` use the incremental one).
//! `cargo bench -p shunt-controller --bench compile`

use std::{collections::BTreeMap, hint::black_box, sync::Arc};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
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
use shunt_controller::compile::{ClusterState, CompileOptions, Incremental, compile};
use shunt_proxy::{
    dataplane::ProxyMetrics,
    publish::{Published, RoutePublisher},
};

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
    mk_state_of_class("shunt")
}

/// [`mk_state`] with every Ingress of `class`.
fn mk_state_of_class(class: &str) -> ClusterState {
    let mut state = ClusterState::default();
    for i in 0..INGRESSES {
        let ns = format!("team-{}", i % 100);
        let name = format!("app-{i}");
        state.ingresses.push(converted(Ingress {
            metadata: meta(&ns, &name, None),
            spec: Some(IngressSpec {
                ingress_class_name: Some(class.into()),
                rules: Some(vec![IngressRule {
                    host: Some(format!("{name}.example.com")),
                    http: Some(HTTPIngressRuleValue {
                        paths: vec![mk_path("/", &name), mk_path("/api", &name)],
                    }),
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }));
        state.services.push(converted(Service {
            metadata: meta(&ns, &name, None),
            spec: Some(ServiceSpec {
                // What a CLB reaches without direct-access: the qcloud Ingresses stay identical.
                type_: Some("NodePort".into()),
                ports: Some(vec![ServicePort {
                    name: Some("http".into()),
                    port: 80,
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }));
        let labels = BTreeMap::from([("kubernetes.io/service-name".to_string(), name.clone())]);
        state.endpoint_slices.push(converted(EndpointSlice {
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
        }));
    }
    state
}

/// A k8s-openapi Service or EndpointSlice as compile's compact type.
fn converted<T: Into<U>, U>(object: T) -> Arc<U> {
    Arc::new(object.into())
}

/// `state` with one endpoint address of one EndpointSlice changed (the scale.sh edit).
fn mk_endpoint_edit(state: &ClusterState) -> ClusterState {
    let mut edited = state.clone();
    let slice = Arc::make_mut(&mut edited.endpoint_slices[INGRESSES / 2]);
    slice.endpoints[0].addresses = ["11.0.0.1"].into_iter().collect();
    edited
}

/// `state` with one more path on one Ingress.
fn mk_ingress_edit(state: &ClusterState) -> ClusterState {
    let mut edited = state.clone();
    let ingress = Arc::make_mut(&mut edited.ingresses[INGRESSES / 2]);
    let name = ingress.metadata.name.clone().unwrap_or_default();
    let rules = ingress.spec.as_mut().and_then(|spec| spec.rules.as_mut());
    let http = rules
        .and_then(|rules| rules[0].http.as_mut())
        .expect("the bench's ingresses have rules");
    http.paths.push(mk_path("/v2", &name).into());
    edited
}

/// `state` with one more Ingress (its own host and Service).
fn mk_ingress_added(state: &ClusterState) -> ClusterState {
    let mut added = state.clone();
    let mut ingress = shunt_controller::objects::Ingress::clone(&state.ingresses[0]);
    ingress.metadata.name = Some("app-new".into());
    if let Some(rule) = ingress.spec.as_mut().and_then(|spec| spec.rules.as_mut()) {
        rule[0].host = Some("app-new.example.com".into());
    }
    added.ingresses.push(Arc::new(ingress));
    added
}

/// One full compile published into `publisher`. Named and not inlined, so an instruction count
/// can take the timed work alone: `valgrind --tool=callgrind --toggle-collect='*full_step*'`.
#[inline(never)]
fn full_step(publisher: &mut RoutePublisher, state: &ClusterState, options: &CompileOptions) -> Published {
    publisher.publish(compile(state, options).table)
}

/// One incremental compile of `next` and its publish of what changed (`--toggle-collect='*edit_step*'`).
#[inline(never)]
fn edit_step(
    incremental: &mut Incremental,
    publisher: &mut RoutePublisher,
    next: &ClusterState,
    options: &CompileOptions,
) -> Published {
    let table = incremental.compile(next, options).table;
    let changes = incremental.spec_changes().expect("an incremental compile");
    publisher.publish_changed(table, changes)
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
    group.bench_function("clone of the cluster state (a snapshot), 10k ingresses", |b| {
        b.iter(|| black_box(state.clone()))
    });
    // What a snapshot would cost if ClusterState owned its objects: the reason it shares them.
    group.bench_function("deep copy of every object (the old snapshot), 10k ingresses", |b| {
        fn deep<K: Clone>(objects: &[Arc<K>]) -> Vec<K> {
            objects.iter().map(|object| K::clone(object)).collect()
        }
        b.iter(|| {
            black_box((
                deep(&state.ingresses),
                deep(&state.services),
                deep(&state.endpoint_slices),
            ))
        })
    });
    group.bench_function("full compile + publish into a new publisher, 10k ingresses", |b| {
        b.iter_batched(
            || RoutePublisher::new(ProxyMetrics::detached()).0,
            |mut publisher| {
                full_step(&mut publisher, &state, &options);
                // Dropped outside the timing: the old tables' teardown is not the publish.
                publisher
            },
            BatchSize::PerIteration,
        )
    });
    for (name, edited) in [
        (
            "one endpoint edit: compile + publish, 10k ingresses",
            mk_endpoint_edit(&state),
        ),
        (
            "one ingress edit: compile + publish, 10k ingresses",
            mk_ingress_edit(&state),
        ),
    ] {
        group.bench_function(name, |b| {
            let (mut publisher, _reader) = RoutePublisher::new(ProxyMetrics::detached());
            publisher.publish(compile(&state, &options).table);
            let mut flip = false;
            b.iter(|| {
                // Alternate the two states so every publish is a one-object change.
                flip = !flip;
                let next = if flip { &edited } else { &state };
                let published = publisher.publish(compile(next, &options).table);
                assert!(matches!(published, Published::Swapped { .. }));
            })
        });
    }
    for (name, edited) in [
        (
            "incremental: one endpoint slice edited, compile + publish, 10k ingresses",
            mk_endpoint_edit(&state),
        ),
        (
            "incremental: one ingress edited, compile + publish, 10k ingresses",
            mk_ingress_edit(&state),
        ),
        (
            "incremental: one ingress added or removed, compile + publish, 10k ingresses",
            mk_ingress_added(&state),
        ),
    ] {
        group.bench_function(name, |b| {
            let (mut publisher, _reader) = RoutePublisher::new(ProxyMetrics::detached());
            let mut incremental = Incremental::default();
            let first = incremental.compile(&state, &options);
            assert_eq!(first, compile(&state, &options));
            publisher.publish(first.table);
            let second = incremental.compile(&edited, &options);
            assert_eq!(second, compile(&edited, &options));
            let changes = incremental.spec_changes().expect("an incremental compile").clone();
            assert!(matches!(
                publisher.publish_changed(second.table, &changes),
                Published::Swapped { .. }
            ));
            let mut flip = true;
            b.iter(|| {
                // Alternate the two states so every publish is a one-object change.
                flip = !flip;
                let next = if flip { &edited } else { &state };
                let published = edit_step(&mut incremental, &mut publisher, next, &options);
                assert!(matches!(published, Published::Swapped { .. }));
            })
        });
    }
    // The same edit where a profile compiles the Ingresses: shadowed (TKE's class, the README's
    // quick start) and taken over with ingress-nginx's semantics.
    for (name, class, options) in [
        (
            "incremental: one endpoint slice edited, compile + publish, 10k qcloud ingresses shadowed",
            "qcloud",
            CompileOptions {
                shadow_classes: vec!["qcloud".into()],
                ..CompileOptions::default()
            },
        ),
        (
            "incremental: one endpoint slice edited, compile + publish, 10k ingresses of class nginx=nginx",
            "nginx",
            CompileOptions {
                ingress_classes: vec!["nginx".into()],
                class_profiles: vec!["nginx=nginx".parse().expect("a class profile")],
                ..CompileOptions::default()
            },
        ),
    ] {
        let state = mk_state_of_class(class);
        let edited = mk_endpoint_edit(&state);
        group.bench_function(name, |b| {
            let (mut publisher, _reader) = RoutePublisher::new(ProxyMetrics::detached());
            let mut incremental = Incremental::default();
            let first = incremental.compile(&state, &options);
            assert_eq!(first.table.hosts.len(), INGRESSES);
            assert_eq!(first, compile(&state, &options));
            publisher.publish(first.table);
            let mut flip = false;
            b.iter(|| {
                flip = !flip;
                let next = if flip { &edited } else { &state };
                let published = edit_step(&mut incremental, &mut publisher, next, &options);
                assert!(matches!(published, Published::Swapped { .. }));
            })
        });
    }
    group.bench_function("incremental: nothing changed, compile, 10k ingresses", |b| {
        let mut incremental = Incremental::default();
        incremental.compile(&state, &options);
        b.iter(|| black_box(incremental.compile(&state, &options)))
    });
    group.finish();
}

criterion_group!(benches, bench_compile);
criterion_main!(benches);
