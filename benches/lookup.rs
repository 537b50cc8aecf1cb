//! RouteTable::lookup on a large table: 1,000 hosts × 10 paths, plus wildcard hosts; then a
//! ranked host (Gateway API matches: 16 paths by header, tried in rank order).
//! `cargo bench -p shunt-proxy --bench lookup`

use std::{collections::BTreeMap, hint::black_box, sync::Arc};

use criterion::{Criterion, criterion_group, criterion_main};
use shunt_proxy::{
    dataplane::internals::{RequestFacts, RouteStats, RouteTable, Upstream, UpstreamStats},
    spec::{
        BackendSpec, FieldCondition, HostMatch, PathKind, PathSpec, RequestConditions, RouteOptions, TableSpec,
        UpstreamProtocol, ValueMatch, VirtualHostSpec,
    },
};

const HOSTS: usize = 1_000;
const PATHS: usize = 10;

fn mk_spec() -> TableSpec {
    let mut backends = BTreeMap::new();
    let mut hosts = Vec::new();
    for h in 0..HOSTS {
        let backend = format!("ns-{h}/svc:80");
        backends.insert(
            backend.clone(),
            BackendSpec {
                protocol: UpstreamProtocol::Http1,
                endpoints: [([10, 0, (h / 250) as u8, (h % 250) as u8], 8080).into()].into(),
                topology: Default::default(),
                tls: None,
            },
        );
        let mut paths: Vec<PathSpec> = (0..PATHS)
            .map(|p| PathSpec {
                path: format!("/service-{p}/v{}", p % 3),
                kind: if p % 2 == 0 { PathKind::Prefix } else { PathKind::Exact },
                backend: backend.clone(),
                source: format!("ns-{h}/ing"),
                ssl_redirect: false,
                options: Default::default(),
            })
            .collect();
        paths.push(PathSpec {
            path: "/".into(),
            kind: PathKind::Prefix,
            backend: backend.clone(),
            source: format!("ns-{h}/ing"),
            ssl_redirect: false,
            options: Default::default(),
        });
        hosts.push(Arc::new(VirtualHostSpec {
            host: HostMatch::Exact(format!("host-{h}.example.com")),
            paths,
            exclusive: false,
        }));
        if h % 10 == 0 {
            hosts.push(Arc::new(VirtualHostSpec {
                host: HostMatch::Wildcard(format!("apps-{h}.example.com")),
                paths: vec![PathSpec {
                    path: "/".into(),
                    kind: PathKind::Prefix,
                    backend,
                    source: format!("ns-{h}/wild"),
                    ssl_redirect: false,
                    options: Default::default(),
                }],
                exclusive: false,
            }));
        }
    }
    TableSpec {
        hosts,
        default_backend: None,
        backends,
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    }
}

/// One ranked host: `/api/v{i}` for 16 values of `x-version`, ranked in that order, then `/`.
fn mk_ranked_spec() -> TableSpec {
    let mut spec = mk_spec();
    let backend = spec.backends.keys().next().expect("a backend").clone();
    let mut paths: Vec<PathSpec> = (0..16)
        .map(|i| PathSpec {
            path: format!("/api/v{i}"),
            kind: PathKind::Prefix,
            backend: backend.clone(),
            source: "gw/route".into(),
            ssl_redirect: false,
            options: Arc::new(RouteOptions {
                rank: i,
                conditions: Some(RequestConditions {
                    headers: vec![FieldCondition {
                        name: "x-version".into(),
                        value: ValueMatch::Exact(i.to_string()),
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            }),
        })
        .collect();
    paths.push(PathSpec {
        path: "/".into(),
        kind: PathKind::Prefix,
        backend,
        source: "gw/route".into(),
        ssl_redirect: false,
        options: Arc::new(RouteOptions {
            rank: 16,
            ..Default::default()
        }),
    });
    spec.hosts = vec![Arc::new(VirtualHostSpec {
        host: HostMatch::Exact("gw.example.com".into()),
        paths,
        exclusive: false,
    })];
    spec
}

fn build(spec: TableSpec) -> RouteTable {
    let (table, warnings) = RouteTable::build(
        Arc::new(spec),
        |id| {
            Arc::new(Upstream::new(
                id,
                UpstreamProtocol::Http1,
                Vec::new(),
                UpstreamStats::default(),
            ))
        },
        |_, _| RouteStats::detached(),
    );
    assert!(warnings.is_empty());
    table
}

fn lookup(c: &mut Criterion) {
    let table = build(mk_spec());
    let mut group = c.benchmark_group("lookup");
    group.bench_function("exact host, prefix path", |b| {
        b.iter(|| black_box(table.lookup(black_box("host-517.example.com"), black_box("/service-4/v1/orders/42"))))
    });
    group.bench_function("exact host, exact path", |b| {
        b.iter(|| black_box(table.lookup(black_box("host-517.example.com"), black_box("/service-3/v0"))))
    });
    group.bench_function("exact host, fallback to /", |b| {
        b.iter(|| black_box(table.lookup(black_box("host-517.example.com"), black_box("/unknown/deep/path"))))
    });
    group.bench_function("wildcard host", |b| {
        b.iter(|| black_box(table.lookup(black_box("tenant-9.apps-510.example.com"), black_box("/x"))))
    });
    group.bench_function("no match", |b| {
        b.iter(|| black_box(table.lookup(black_box("nowhere.test"), black_box("/"))))
    });
    group.finish();
}

/// The route phase's lookup on a table with a ranked host: the facts are given for every host.
fn ranked(c: &mut Criterion) {
    let standard = build(mk_spec());
    let table = build(mk_ranked_spec());
    let mut headers = http::HeaderMap::new();
    headers.insert("x-version", http::HeaderValue::from_static("8"));
    let facts = RequestFacts {
        method: &http::Method::GET,
        headers: &headers,
        query: None,
    };
    let mut group = c.benchmark_group("lookup");
    group.bench_function("exact host, prefix path, request facts given", |b| {
        b.iter(|| {
            let (host, path) = (black_box("host-517.example.com"), black_box("/service-4/v1/orders/42"));
            black_box(standard.lookup_with(host, path, false, black_box(&facts)))
        })
    });
    group.bench_function("ranked host, 9th of 17 paths by header", |b| {
        b.iter(|| black_box(table.lookup_with(black_box("gw.example.com"), black_box("/api/v8/x"), false, &facts)))
    });
    group.bench_function("ranked host, none by header, then /", |b| {
        b.iter(|| black_box(table.lookup_with(black_box("gw.example.com"), black_box("/api/v99/x"), false, &facts)))
    });
    group.finish();
}

criterion_group!(benches, lookup, ranked);
criterion_main!(benches);
