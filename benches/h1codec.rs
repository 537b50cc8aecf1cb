//! Our HTTP/1.1 upstream client's per-request codec: parsing a typical pod response head, and
//! writing a typical forwarded request head.
//! `cargo bench -p shunt-proxy --bench h1codec`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use http::{HeaderMap, Method};
use shunt_proxy::upstream::h1::{Framing, encode_head, parse_head};

/// What a small web app behind the proxy answers (the shape of the benches' backends).
const RESPONSE_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
    Server: nginx\r\n\
    Date: Tue, 24 Nov 2026 14:00:00 GMT\r\n\
    Content-Type: text/html; charset=utf-8\r\n\
    Content-Length: 612\r\n\
    Connection: keep-alive\r\n\
    Cache-Control: no-cache\r\n\
    ETag: \"5f3b-264\"\r\n\r\n";

mod browser;

/// A browser's request as shunt forwards it.
fn mk_forwarded_headers() -> HeaderMap {
    browser::browser_request(&[
        ("x-forwarded-for", "10.1.2.3"),
        ("x-forwarded-host", "shop.example.com"),
        ("x-forwarded-proto", "http"),
        ("x-real-ip", "10.1.2.3"),
        ("x-request-id", "1fe3031ce533101ee5a6a8051eaedffe"),
    ])
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("h1codec");
    group.bench_function("parse_response_head", |b| {
        b.iter(|| parse_head(black_box(RESPONSE_HEAD), false).expect("a valid head"))
    });
    let headers = mk_forwarded_headers();
    let mut out = Vec::with_capacity(1024);
    group.bench_function("encode_request_head", |b| {
        b.iter(|| {
            out.clear();
            encode_head(
                &mut out,
                &Method::GET,
                black_box("/products?page=2"),
                headers.iter(),
                Framing::Empty,
            );
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
