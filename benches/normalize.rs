//! Request checks on the hot path: an already-normal path must cost a scan, not an allocation.
//! `cargo bench -p shunt-proxy --bench normalize`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use shunt_proxy::dataplane::internals::normalize_path;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("normalize_path");
    for (name, path) in [
        ("normal_short", "/api/orders/42"),
        ("normal_escaped", "/api/search/caf%C3%A9%20au%20lait/items/7"),
        ("rewrite_dots", "/x/../api//orders/./42"),
        ("rewrite_escapes", "/%61pi/search/caf%c3%a9/items/7"),
    ] {
        group.bench_function(name, |b| b.iter(|| normalize_path(black_box(path)).map(|p| p.len())));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
