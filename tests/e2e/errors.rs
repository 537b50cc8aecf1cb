//! Failures become short plain-text answers naming what failed: 404, 503, 502, 504, 413, 431
//! and 400.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};

use crate::support::*;

const HOST: &str = "app.example.com";
const NO_ENDPOINTS: &str = "503 Service Unavailable: backend web/app:80 has no ready endpoints";

fn mk_app_ingress() -> Ingress {
    mk_ingress("web", "app").rule(HOST, [mk_path("/", "Prefix", "app", 80)])
}

/// [`HOST`] routed to Service `web/app`, whose endpoints are `slices`.
async fn serve_with_slices(slices: Vec<EndpointSlice>) -> (Manifests, Shunt) {
    let service = mk_service("web", "app").port(Some("http"), 80, None);
    serve(&[&mk_app_ingress(), &service, &slices], &[]).await
}

fn assert_reply(reply: &Reply, status: StatusCode, body: &str) {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert_eq!(reply.text().trim_end(), body);
}

#[tokio::test]
async fn a_backend_without_ready_endpoints_gets_503() {
    // Never dialed: the endpoint is not ready.
    let not_ready = mk_slice("web", "app", 8080)
        .port_name("http")
        .endpoint("127.0.0.1", false, false, false);
    let (_manifests, shunt) = serve_with_slices(vec![not_ready]).await;
    assert_reply(
        &shunt.get(HOST, "/").await,
        StatusCode::SERVICE_UNAVAILABLE,
        NO_ENDPOINTS,
    );
}

#[tokio::test]
async fn a_service_without_endpoint_slices_gets_503() {
    let (_manifests, shunt) = serve_with_slices(Vec::new()).await;
    assert_reply(
        &shunt.get(HOST, "/").await,
        StatusCode::SERVICE_UNAVAILABLE,
        NO_ENDPOINTS,
    );
}

#[tokio::test]
async fn serving_terminating_endpoints_are_used_when_none_is_ready() {
    let backend = Backend::start("draining").await;
    let draining = mk_slice("web", "app", backend.port())
        .port_name("http")
        .endpoint("127.0.0.1", false, true, true);
    let (_manifests, shunt) = serve_with_slices(vec![draining]).await;
    assert_eq!(shunt.get(HOST, "/").await.backend(), "draining");
}

#[tokio::test]
async fn a_slice_for_another_port_name_does_not_serve_the_service_port() {
    let backend = Backend::start("metrics").await;
    let other_port = mk_slice("web", "app", backend.port())
        .port_name("metrics")
        .ready("127.0.0.1");
    let (_manifests, shunt) = serve_with_slices(vec![other_port]).await;
    assert_eq!(shunt.get(HOST, "/").await.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(backend.hits(), 0);
}

#[tokio::test]
async fn a_refused_connection_gets_502_naming_the_backend() {
    let dead = RefusingPort::new();
    let (_manifests, shunt) = serve_host(HOST, "app", None, &[dead.port()], &[]).await;
    let reply = shunt.get(HOST, "/").await;
    assert_reply(
        &reply,
        StatusCode::BAD_GATEWAY,
        "502 Bad Gateway: backend web/app:80 unreachable",
    );
}

#[tokio::test]
async fn a_slow_backend_gets_504_after_the_upstream_timeout() {
    let backend = Backend::http1("app").delay(Duration::from_secs(5)).start().await;
    let (_manifests, shunt) = serve_host(HOST, "app", None, &[backend.port()], &["--upstream-timeout", "1s"]).await;
    let started = Instant::now();
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::GATEWAY_TIMEOUT, "{}", reply.text());
    assert!(
        reply.text().starts_with("504 Gateway Timeout: backend web/app:80"),
        "{}",
        reply.text()
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered before the backend would have"
    );
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413_whether_its_length_is_declared_or_not() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = serve_host(HOST, "app", None, &[backend.port()], &["--max-body-size", "1Ki"]).await;

    let small = Request::post("/")
        .header(header::HOST, HOST)
        .body(full(vec![b'a'; 1024]))
        .expect("a request");
    let reply = shunt.send(small).await;
    assert_eq!(reply.json()["body_len"], 1024, "a body at the limit passes");

    let declared = Request::post("/")
        .header(header::HOST, HOST)
        .body(full(vec![b'a'; 2048]))
        .expect("a request");
    let reply = shunt.send(declared).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", reply.text());
    assert!(reply.text().starts_with("413 Payload Too Large"), "{}", reply.text());

    // No Content-Length: the limit must hold on the streamed body too.
    let chunks = (0..4).map(|_| Ok::<_, BoxError>(hyper::body::Frame::data(Bytes::from(vec![b'b'; 1024]))));
    let streamed = StreamBody::new(futures::stream::iter(chunks)).boxed();
    let chunked = Request::post("/")
        .header(header::HOST, HOST)
        .body(streamed)
        .expect("a request");
    let reply = shunt.send(chunked).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", reply.text());
}

#[tokio::test]
async fn a_huge_request_header_gets_431() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = serve_host(HOST, "app", None, &[backend.port()], &["--max-header-size", "16Ki"]).await;
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {HOST}\r\nX-Huge: {}\r\n\r\n",
        "h".repeat(20 * 1024)
    );
    let answer = raw(shunt.http, request.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 431"),
        "expected 431, got {:?}",
        answer.lines().next()
    );
    assert_eq!(backend.hits(), 0);
    // A head under the limit still passes.
    let ok = format!(
        "GET / HTTP/1.1\r\nHost: {HOST}\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "h".repeat(8 * 1024)
    );
    let answer = raw(shunt.http, ok.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "expected 200, got {:?}",
        answer.lines().next()
    );
}

#[tokio::test]
async fn an_http11_request_without_host_gets_400() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = serve_host(HOST, "app", None, &[backend.port()], &[]).await;
    let answer = raw(shunt.http, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400"), "expected 400, got {answer:?}");
    assert_eq!(backend.hits(), 0);
}
