//! Header rewriting on every proxied request: hop-by-hop removal and the forwarding headers
//! (X-Forwarded-*, X-Real-IP, `Forwarded`, X-Request-Id) and the underscore-name check, on a
//! typical browser-like request.
//! `cargo bench -p shunt-proxy --bench headers`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use http::{HeaderMap, HeaderValue, header};
use shunt_proxy::{
    dataplane::internals::{AddedFields, ForwardedContext, drop_underscored, set_forwarded, strip_hop_by_hop},
    spec::TrustedProxies,
};

mod browser;

fn mk_request_headers() -> HeaderMap {
    browser::browser_request(&[("cookie", "session=abc123; theme=dark")])
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("headers");
    let untrusted = TrustedProxies::default();
    let trusted: TrustedProxies = "10.0.0.0/8".parse().expect("a CIDR");
    let host = HeaderValue::from_static("shop.example.com");
    let ctx = ForwardedContext {
        peer: "10.1.2.3".parse().expect("an address"),
        scheme: "http",
        host: host.to_str().expect("ascii"),
        host_field: Some(&host),
    };
    group.bench_function("strip_hop_by_hop_none_present", |b| {
        b.iter_batched(
            mk_request_headers,
            |mut h| {
                strip_hop_by_hop(&mut h);
                h
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("strip_hop_by_hop_connection_keep_alive", |b| {
        let mk = || {
            let mut h = mk_request_headers();
            h.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
            h
        };
        b.iter_batched(
            mk,
            |mut h| {
                strip_hop_by_hop(&mut h);
                h
            },
            BatchSize::SmallInput,
        )
    });
    // The check every request pays: one look at each name, no change when none holds `_`.
    group.bench_function("drop_underscored_none_present", |b| {
        b.iter_batched(
            mk_request_headers,
            |mut h| {
                black_box(drop_underscored(&mut h));
                h
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("drop_underscored_one_present", |b| {
        let mk = || {
            let mut h = mk_request_headers();
            h.insert("x_user", HeaderValue::from_static("admin"));
            h
        };
        b.iter_batched(
            mk,
            |mut h| {
                black_box(drop_underscored(&mut h));
                h
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("set_forwarded_untrusted_peer", |b| {
        b.iter_batched(
            mk_request_headers,
            |mut h| {
                let mut added = AddedFields::with_capacity(9);
                set_forwarded(&mut h, black_box(&ctx), &untrusted, &mut added);
                (h, added)
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("set_forwarded_trusted_peer_with_chain", |b| {
        let mk = || {
            let mut h = mk_request_headers();
            h.insert("x-forwarded-for", HeaderValue::from_static("203.0.113.9, 10.9.9.9"));
            h
        };
        b.iter_batched(
            mk,
            |mut h| {
                let mut added = AddedFields::with_capacity(9);
                set_forwarded(&mut h, black_box(&ctx), &trusted, &mut added);
                (h, added)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
