//! The upstream timeout around an exchange that waits once (as one waiting for a pod's answer
//! does): a spare timer moved later (`Deadlines::run`) against a new tokio timer per request
//! (`tokio::time::timeout`), on one current-thread runtime like a worker's.
//! `cargo bench -p shunt-proxy --bench deadline`

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use shunt_proxy::upstream::deadline::Deadlines;

const TIMEOUT: Duration = Duration::from_secs(60);

fn upstream_timeout(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let deadlines = Deadlines::default();
    c.bench_function("deadlines_run", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let outcome = deadlines.run(TIMEOUT, tokio::task::yield_now()).await;
                assert!(outcome.is_ok());
            })
        })
    });
    c.bench_function("tokio_timeout", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let outcome = tokio::time::timeout(TIMEOUT, tokio::task::yield_now()).await;
                assert!(outcome.is_ok());
            })
        })
    });
}

criterion_group!(benches, upstream_timeout);
criterion_main!(benches);
