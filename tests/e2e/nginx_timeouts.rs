//! ingress-nginx's `proxy-read-timeout` on a route, end to end: counted between two reads from
//! the pod (for the head, then between body chunks), not for the whole answer, and replacing
//! shunt's own `--upstream-timeout`.

use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};

use crate::support::*;

const HOST: &str = "poll.example.com";

/// A pod that waits `head` before its head, sends `a`, waits `body`, then sends `b`.
async fn start_pausing_pod(head: Duration, body: Duration) -> Backend {
    Backend::http1("app")
        .handler(move |_req| async move {
            tokio::time::sleep(head).await;
            let frames = futures::stream::unfold(0, move |sent| async move {
                let chunk = |text: &'static str| {
                    Ok::<_, BoxError>(hyper::body::Frame::data(Bytes::from_static(text.as_bytes())))
                };
                match sent {
                    0 => Some((chunk("a"), 1)),
                    1 => {
                        tokio::time::sleep(body).await;
                        Some((chunk("b"), 2))
                    }
                    _ => None,
                }
            });
            Response::new(StreamBody::new(frames).boxed())
        })
        .start()
        .await
}

/// shunt with `--upstream-timeout upstream` serving an nginx Ingress whose read timeout is
/// `read_timeout` seconds.
async fn serve_nginx(pod: &Backend, upstream: &str, read_timeout: &str) -> (Manifests, Shunt) {
    let ingress = mk_ingress("shop", "poll")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/proxy-read-timeout", read_timeout)
        .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false")
        .rule(HOST, [mk_path("/", "Prefix", "app", 80)]);
    let service = mk_service_on_ports("shop", "app", None, &[pod.port()]);
    let args = ["--shadow-class", "nginx", "--upstream-timeout", upstream];
    serve(&[&ingress, &service], &args).await
}

#[tokio::test]
async fn pauses_shorter_than_the_routes_read_timeout_keep_a_long_poll_alive() {
    let pause = Duration::from_millis(1500);
    let pod = start_pausing_pod(pause, pause).await;
    // Each pause is longer than the proxy's 1 s and shorter than the route's 3 s; all of them
    // together are longer than 3 s too.
    let (_manifests, shunt) = serve_nginx(&pod, "1s", "3").await;
    let reply = shunt.get(HOST, "/events").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.text(), "ab");
}

#[tokio::test]
async fn a_head_later_than_the_routes_read_timeout_is_a_504() {
    let pod = start_pausing_pod(Duration::from_millis(1500), Duration::ZERO).await;
    let (_manifests, shunt) = serve_nginx(&pod, "10s", "1").await;
    let reply = shunt.get(HOST, "/events").await;
    assert_eq!(reply.status, StatusCode::GATEWAY_TIMEOUT, "{}", reply.text());
}

#[tokio::test]
async fn a_pause_between_chunks_past_the_read_timeout_ends_the_answer_cut() {
    let pod = start_pausing_pod(Duration::ZERO, Duration::from_millis(3500)).await;
    let (_manifests, shunt) = serve_nginx(&pod, "10s", "2").await;
    let response = send_h1(shunt.http, get(HOST, "/events")).await.expect("a head in time");
    assert_eq!(response.status(), StatusCode::OK);
    let body = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect()).await;
    let body = body.expect("the body ends");
    assert!(body.is_err(), "a chunked body cut, not completed: {body:?}");
}

/// ingress-nginx's `proxy-send-timeout`: a pod that takes no more of the request for longer
/// than the route's send timeout gets no more time; the caller gets 504, as from nginx.
#[tokio::test]
async fn a_pod_that_stops_reading_the_request_past_the_send_timeout_is_a_504() {
    // Accepts and holds each connection without reading: once the socket buffers are full,
    // shunt's writes wait.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let held = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let ingress = mk_ingress("shop", "upload")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/proxy-send-timeout", "1")
        .annotation("nginx.ingress.kubernetes.io/proxy-body-size", "0")
        .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false")
        .rule(HOST, [mk_path("/", "Prefix", "app", 80)]);
    let service = mk_service_on_ports("shop", "app", None, &[port]);
    let (_manifests, shunt) = serve(&[&ingress, &service], &["--shadow-class", "nginx"]).await;

    // 64 MiB, far more than loopback's socket buffers hold.
    let chunk = Bytes::from(vec![b'x'; 1 << 20]);
    let frames =
        futures::stream::iter((0..64).map(move |_| Ok::<_, BoxError>(hyper::body::Frame::data(chunk.clone()))));
    let request = http::Request::post("/upload")
        .header(http::header::HOST, HOST)
        .body(StreamBody::new(frames).boxed())
        .expect("a request");
    let started = std::time::Instant::now();
    let response = tokio::time::timeout(Duration::from_secs(20), send_h1(shunt.http, request))
        .await
        .expect("an answer well before the 60 s default")
        .expect("a response head");
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    assert!(started.elapsed() >= Duration::from_secs(1), "{:?}", started.elapsed());
    held.abort();
}
