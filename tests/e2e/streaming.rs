//! Bodies stream through: multi-megabyte request and response bodies arrive intact, and a
//! response's first chunk reaches the client while the backend is still writing.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, Version, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use tokio::sync::Notify;

use crate::support::*;

const HOST: &str = "files.example.com";
const CHUNK: usize = 64 * 1024;
const CHUNKS: usize = 128;

/// 8 MiB (`CHUNKS` × `CHUNK`) of bytes that differ from chunk to chunk, as a streamed body.
fn large_body() -> (Body, usize, u64) {
    let chunks: Vec<Bytes> = (0..CHUNKS).map(|i| Bytes::from(vec![(i % 251) as u8; CHUNK])).collect();
    let whole: Vec<u8> = chunks.iter().flat_map(|chunk| chunk.iter().copied()).collect();
    let frames = chunks.into_iter().map(|chunk| Ok::<_, BoxError>(Frame::data(chunk)));
    (
        StreamBody::new(futures::stream::iter(frames)).boxed(),
        whole.len(),
        fnv64(&whole),
    )
}

async fn serve_files(backend: &Backend) -> (Manifests, Shunt) {
    serve_host(HOST, "files", None, &[backend.port()], &[]).await
}

#[tokio::test]
async fn an_8_mib_request_body_reaches_the_backend_intact() {
    let backend = Backend::start("files").await;
    let (_manifests, shunt) = serve_files(&backend).await;
    let (body, len, hash) = large_body();
    let reply = shunt
        .send(
            Request::put("/upload")
                .header(header::HOST, HOST)
                .body(body)
                .expect("a request"),
        )
        .await;
    let seen = reply.json();
    assert_eq!(seen["body_len"], len);
    assert_eq!(seen["body_fnv"], format!("{hash:016x}"));
}

#[tokio::test]
async fn an_8_mib_response_body_reaches_the_client_intact() {
    let backend = Backend::http1("files")
        .handler(|_req| async { Response::new(large_body().0) })
        .start()
        .await;
    let (_manifests, shunt) = serve_files(&backend).await;
    let (_, len, hash) = large_body();
    let reply = shunt.get(HOST, "/download").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body.len(), len);
    assert_eq!(fnv64(&reply.body), hash);
}

#[tokio::test]
async fn a_chunked_response_streams_before_the_backend_finishes() {
    let release = Arc::new(Notify::new());
    let backend_release = release.clone();
    let backend = Backend::http1("files")
        .handler(move |_req| {
            // The rest waits for the test: a proxy that buffers whole bodies never delivers the first.
            let response = held_stream(b"first chunk\n", backend_release.clone(), b"second chunk\n");
            async move { response }
        })
        .start()
        .await;
    let (_manifests, shunt) = serve_files(&backend).await;

    let response = send_h1(shunt.http, get(HOST, "/events"))
        .await
        .expect("a response head through shunt");
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut first = Vec::new();
    let first_chunk = async {
        while first.len() < b"first chunk\n".len() {
            let frame = body.frame().await.expect("the body goes on").expect("a body frame");
            first.extend_from_slice(&frame.into_data().unwrap_or_default());
        }
    };
    tokio::time::timeout(REQUEST_TIMEOUT, first_chunk)
        .await
        .expect("the first chunk arrives while the backend waits");
    assert_eq!(first, b"first chunk\n");

    release.notify_one();
    let rest = tokio::time::timeout(REQUEST_TIMEOUT, body.collect())
        .await
        .expect("the rest arrives")
        .expect("the body ends");
    assert_eq!(rest.to_bytes(), Bytes::from_static(b"second chunk\n"));
}

/// An HTTP/1.1 origin answering `hi` in a chunked body followed by the trailer `grpc-status: 0`,
/// declared in a `Trailer` header as HTTP/1.1 requires.
async fn start_trailing_backend() -> Backend {
    Backend::http1("files")
        .handler(|_req| async {
            let mut trailers = HeaderMap::new();
            trailers.insert("grpc-status", HeaderValue::from_static("0"));
            let frames = [Frame::data(Bytes::from_static(b"hi")), Frame::trailers(trailers)].map(Ok::<_, BoxError>);
            let body = StreamBody::new(futures::stream::iter(frames)).boxed();
            Response::builder()
                .header(header::TRAILER, "grpc-status")
                .body(body)
                .expect("a valid response")
        })
        .start()
        .await
}

fn trailer<'a>(reply: &'a Reply, name: &str) -> Option<&'a [u8]> {
    reply.trailers.as_ref()?.get(name).map(HeaderValue::as_bytes)
}

#[tokio::test]
async fn trailers_from_an_http11_backend_reach_an_http2_client() {
    let backend = start_trailing_backend().await;
    let (_manifests, shunt) = serve_files(&backend).await;
    let req = Request::get(format!("http://{HOST}/"))
        .version(Version::HTTP_2)
        .header(header::TE, "trailers")
        .body(full(Bytes::new()))
        .expect("a request");
    let reply = shunt.send_h2(req).await;
    assert_eq!(reply.body, Bytes::from_static(b"hi"));
    assert_eq!(trailer(&reply, "grpc-status"), Some(&b"0"[..]), "{reply:?}");
}

#[tokio::test]
async fn trailers_from_an_http11_backend_reach_an_http11_client_that_accepts_them() {
    let backend = start_trailing_backend().await;
    let (_manifests, shunt) = serve_files(&backend).await;
    // Straight to the backend the trailer arrives: what the client does is sound.
    let direct = get(HOST, "/");
    let direct = collect(
        send_h1(backend.addr, with_te_trailers(direct))
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(trailer(&direct.expect("a body"), "grpc-status"), Some(&b"0"[..]));

    let reply = shunt.send(with_te_trailers(get(HOST, "/"))).await;
    assert_eq!(reply.body, Bytes::from_static(b"hi"));
    assert_eq!(trailer(&reply, "grpc-status"), Some(&b"0"[..]), "{reply:?}");
}

fn with_te_trailers(mut req: Request<Body>) -> Request<Body> {
    req.headers_mut()
        .insert(header::TE, HeaderValue::from_static("trailers"));
    req
}
