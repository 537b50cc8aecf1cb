//! Our HTTP/1.1 codecs per request. Client side (to pods): parsing a typical pod response head,
//! writing a typical forwarded request head. Server side (our loop, `server::http1`): parsing a
//! browser's request head, writing the response head back.
//! `cargo bench -p shunt-proxy --bench h1codec`

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{Criterion, criterion_group, criterion_main};
use http::{HeaderMap, Method, StatusCode};
use shunt_proxy::dataplane::internals::{
    Framing, encode_head,
    head::{self, Parsed},
    parse_head,
    response::{self, BodyShape},
};

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

/// A browser's request as it reaches shunt.
const REQUEST_HEAD: &[u8] = b"GET /products?page=2 HTTP/1.1\r\n\
    Host: shop.example.com\r\n\
    User-Agent: Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0\r\n\
    Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
    Accept-Language: en-US,en;q=0.5\r\n\
    Accept-Encoding: gzip, deflate, br\r\n\r\n";

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
    let request = BytesMut::from(REQUEST_HEAD);
    group.bench_function("server_parse_request_head", |b| {
        b.iter(|| match head::parse(black_box(&request), 32 * 1024) {
            Parsed::Request { consumed, .. } => consumed,
            other => panic!("not served by the loop: {other:?}"),
        })
    });
    // The pod's answer as `respond` leaves it: hop-by-hop fields gone, length from the body.
    let answer = parse_head(RESPONSE_HEAD, false).expect("parses").expect("a whole head");
    let mut answer_headers = answer.headers;
    answer_headers.remove(http::header::CONNECTION);
    group.bench_function("server_encode_response_head", |b| {
        b.iter(|| {
            out.clear();
            response::encode_head(
                &mut out,
                StatusCode::OK,
                black_box(&answer_headers),
                BodyShape::Exact(612),
                &Method::GET,
                false,
            )
            .expect("a valid length");
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
