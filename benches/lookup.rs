//! RouteTable::lookup on a large table: 1,000 hosts × 10 paths, plus wildcard hosts.
//! `cargo bench -p shunt-proxy --bench lookup`

use std::{collections::BTreeMap, hint::black_box, sync::Arc};

use criterion::{Criterion, criterion_group, criterion_main};
use shunt_proxy::{
    dataplane::internals::{RouteStats, RouteTable, Upstream, UpstreamStats},
    spec::{BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec},
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
    }
}

fn lookup(c: &mut Criterion) {
    let (table, warnings) = RouteTable::build(
        Arc::new(mk_spec()),
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

criterion_group!(benches, lookup);
criterion_main!(benches);
