//! Upstream faults and limits: connection caps, GOAWAY, refused streams, client aborts.
//!
//! The origins here are built in the file (not [`Backend`]) because each test needs to see or
//! steer the connections themselves: count accepts, send GOAWAY, refuse a stream.

use std::{
    collections::HashSet,
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::{Request, Response, StatusCode, Version};
use hyper::{body::Incoming, client::conn::http2, service::service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::{
    io::AsyncWriteExt,
    net::{TcpListener, TcpStream},
    sync::Notify,
    task::JoinHandle,
};

use crate::support::*;

const HOST: &str = "up.example.com";
const BACKEND: &str = "web/up:80";

/// An origin on loopback that counts accepted connections and requests in flight.
struct Origin {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    /// Connections the peer (shunt) closed.
    closed: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// HTTP/1.1, answering each request with [`echo`] after `delay`.
async fn start_counting_origin(delay: Duration) -> Origin {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding an origin");
    let addr = listener.local_addr().expect("a bound listener has an address");
    let (accepted, max_in_flight) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (in_flight, closed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let accept = tokio::spawn({
        let (accepted, max_in_flight, closed) = (accepted.clone(), max_in_flight.clone(), closed.clone());
        async move {
            // Bounded: the test aborts this task when the origin is dropped.
            while let Ok((stream, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                let (in_flight, max_in_flight) = (in_flight.clone(), max_in_flight.clone());
                let service = service_fn(move |req| {
                    let (in_flight, max_in_flight) = (in_flight.clone(), max_in_flight.clone());
                    async move {
                        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        max_in_flight.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(delay).await;
                        let response = echo("up".into(), req).await;
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        Ok::<_, Infallible>(response)
                    }
                });
                let connection =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                let closed = closed.clone();
                tokio::spawn(async move {
                    drop(connection.await);
                    closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        }
    });
    Origin {
        addr,
        accepted,
        closed,
        max_in_flight,
        accept,
    }
}

/// One HTTP/2 prior-knowledge connection to shunt, shared by many streams.
async fn h2_client(shunt: &Shunt) -> http2::SendRequest<Body> {
    let stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    let (sender, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .expect("an HTTP/2 handshake with shunt");
    tokio::spawn(async move { drop(connection.await) });
    sender
}

fn mk_request(method: &str, path: &str, body: Bytes) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(format!("http://{HOST}{path}"))
        .version(Version::HTTP_2)
        .body(full(body))
        .expect("a valid request")
}

async fn send(sender: &mut http2::SendRequest<Body>, req: Request<Body>) -> Reply {
    let response = tokio::time::timeout(REQUEST_TIMEOUT, sender.send_request(req))
        .await
        .expect("an answer in time")
        .expect("a response from shunt");
    collect(response).await.expect("the whole body")
}

/// The sum of every `name` sample carrying `label="value"`.
fn total(metrics: &str, name: &str, label: (&str, &str)) -> f64 {
    let wanted = format!("{}=\"{}\"", label.0, label.1);
    metrics
        .lines()
        .filter(|line| line.starts_with(name) && line.contains(&wanted))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn concurrent_h2_streams_share_at_most_the_configured_upstream_connections() {
    let origin = start_counting_origin(Duration::from_millis(20)).await;
    let args = [
        "--upstream-max-connections",
        "8",
        "--threads",
        "1",
        "--connect-timeout",
        "30s",
    ];
    let (_manifests, shunt) = serve_host(HOST, "up", None, &[origin.addr.port()], &args).await;
    let sender = h2_client(&shunt).await;

    let mut streams = Vec::new();
    for i in 0..256 {
        let mut sender = sender.clone();
        streams.push(tokio::spawn(async move {
            send(&mut sender, mk_request("GET", &format!("/item/{i}"), Bytes::new())).await
        }));
    }
    for (i, stream) in streams.into_iter().enumerate() {
        let reply = stream.await.expect("no panic");
        assert_eq!(reply.status, StatusCode::OK, "stream {i}: {}", reply.text());
        assert_eq!(reply.json()["path_and_query"], format!("/item/{i}"));
    }
    let accepted = origin.accepted.load(Ordering::SeqCst);
    assert!((1..=8).contains(&accepted), "{accepted} upstream connections");
    assert!(origin.max_in_flight.load(Ordering::SeqCst) <= 8);
    let metrics = shunt.metrics().await;
    let open = sample(&metrics, "shunt_upstream_connections", &[]);
    assert!(open.is_some_and(|open| (1.0..=8.0).contains(&open)), "{open:?}");
}

#[tokio::test]
async fn a_request_that_finds_the_endpoint_at_its_cap_too_long_gets_503() {
    let origin = start_counting_origin(Duration::from_secs(3)).await;
    let args = [
        "--upstream-max-connections",
        "1",
        "--threads",
        "1",
        "--connect-timeout",
        "200ms",
    ];
    let (_manifests, shunt) = serve_host(HOST, "up", None, &[origin.addr.port()], &args).await;
    let mut sender = h2_client(&shunt).await;
    let slow = tokio::spawn({
        let mut sender = sender.clone();
        async move { send(&mut sender, mk_request("GET", "/slow", Bytes::new())).await }
    });
    // The first request holds the only connection once the origin has it.
    eventually("the first request at the origin", Duration::from_secs(5), async || {
        (origin.max_in_flight.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    let reply = send(&mut sender, mk_request("GET", "/waits", Bytes::new())).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{}", reply.text());
    assert!(reply.text().contains("no free connection"), "{}", reply.text());
    let metrics = shunt.metrics().await;
    assert_eq!(
        sample(&metrics, "shunt_upstream_pool_timeouts_total", &[("backend", BACKEND)]),
        Some(1.0)
    );
    assert_eq!(slow.await.expect("no panic").status, StatusCode::OK);
    assert_eq!(origin.accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_idle_upstream_connection_is_closed_after_the_idle_timeout_and_reused_before() {
    let origin = start_counting_origin(Duration::ZERO).await;
    let args = ["--upstream-idle-timeout", "300ms", "--threads", "1"];
    let (_manifests, shunt) = serve_host(HOST, "up", None, &[origin.addr.port()], &args).await;
    let mut sender = h2_client(&shunt).await;
    for i in 0..3 {
        let reply = send(&mut sender, mk_request("GET", &format!("/{i}"), Bytes::new())).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    }
    assert_eq!(
        origin.accepted.load(Ordering::SeqCst),
        1,
        "sequential requests reuse one connection"
    );
    // Closed within the idle timeout plus the reaper's half period, with room for a busy machine.
    eventually("the idle connection closed", Duration::from_secs(3), async || {
        (origin.closed.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    let metrics = shunt.metrics().await;
    assert_eq!(sample(&metrics, "shunt_upstream_connections", &[]), Some(0.0));
    let reply = send(&mut sender, mk_request("GET", "/again", Bytes::new())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        origin.accepted.load(Ordering::SeqCst),
        2,
        "a new connection after the idle one closed"
    );
}

/// An h2c origin: every connection is numbered, requests to `/goaway` make the connection they
/// came on shut down gracefully (GOAWAY) while they are still answered, slowly.
struct GoawayOrigin {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    goaway_sent: Arc<Notify>,
    accept: JoinHandle<()>,
}

impl Drop for GoawayOrigin {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn start_goaway_origin() -> GoawayOrigin {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding an origin");
    let addr = listener.local_addr().expect("a bound listener has an address");
    let accepted = Arc::new(AtomicUsize::new(0));
    let goaway_sent = Arc::new(Notify::new());
    let accept = tokio::spawn({
        let (accepted, goaway_sent) = (accepted.clone(), goaway_sent.clone());
        async move {
            while let Ok((stream, _)) = listener.accept().await {
                let number = accepted.fetch_add(1, Ordering::SeqCst) + 1;
                let shutdown = Arc::new(Notify::new());
                let service = service_fn({
                    let shutdown = shutdown.clone();
                    move |req: Request<Incoming>| {
                        let shutdown = shutdown.clone();
                        async move {
                            if req.uri().path() == "/goaway" {
                                shutdown.notify_one();
                                tokio::time::sleep(Duration::from_millis(500)).await;
                            }
                            let mut response = echo(format!("connection-{number}"), req).await;
                            response.headers_mut().insert("x-connection", number.into());
                            Ok::<_, Infallible>(response)
                        }
                    }
                });
                let goaway_sent = goaway_sent.clone();
                tokio::spawn(async move {
                    let connection = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => return,
                        () = shutdown.notified() => connection.as_mut().graceful_shutdown(),
                    }
                    goaway_sent.notify_one();
                    drop(connection.await);
                });
            }
        }
    });
    GoawayOrigin {
        addr,
        accepted,
        goaway_sent,
        accept,
    }
}

#[tokio::test]
async fn requests_after_an_h2c_backends_goaway_go_to_a_new_connection_bodies_included() {
    let origin = start_goaway_origin().await;
    let args = ["--threads", "1"];
    let (_manifests, shunt) = serve_host(HOST, "up", Some("kubernetes.io/h2c"), &[origin.addr.port()], &args).await;
    let mut sender = h2_client(&shunt).await;
    assert_eq!(
        send(&mut sender, mk_request("GET", "/warm", Bytes::new())).await.status,
        StatusCode::OK
    );

    // A slow request makes its connection go away, and keeps it open while it is answered.
    let slow = tokio::spawn({
        let mut sender = sender.clone();
        async move { send(&mut sender, mk_request("POST", "/goaway", Bytes::from_static(b"first"))).await }
    });
    tokio::time::timeout(REQUEST_TIMEOUT, origin.goaway_sent.notified())
        .await
        .expect("the origin sent GOAWAY");
    // Give the GOAWAY a moment to reach shunt, so the next requests find a connection going away.
    tokio::time::sleep(Duration::from_millis(100)).await;

    let body = Bytes::from(vec![b'x'; 20_000]);
    for i in 0..10 {
        let (method, body) = if i % 2 == 0 {
            ("GET", Bytes::new())
        } else {
            ("POST", body.clone())
        };
        let reply = send(&mut sender, mk_request(method, &format!("/after/{i}"), body.clone())).await;
        assert_eq!(reply.status, StatusCode::OK, "{method} {i}: {}", reply.text());
        let seen = reply.json();
        assert_ne!(
            seen["backend"], "connection-1",
            "{method} {i} went to the connection going away"
        );
        assert_eq!(seen["body_len"], body.len(), "{seen}");
        assert_eq!(seen["body_fnv"], format!("{:016x}", fnv64(&body)), "{seen}");
    }
    let slow = slow.await.expect("no panic");
    assert_eq!(slow.status, StatusCode::OK, "in-flight streams finish: {}", slow.text());
    assert_eq!(slow.json()["backend"], "connection-1");
    assert_eq!(
        origin.accepted.load(Ordering::SeqCst),
        2,
        "one new connection, not one per request"
    );
}

/// An h2c origin that refuses each request (by its `x-test-id`) the first time with
/// REFUSED_STREAM, and answers it the second time. The refusal comes before the body is
/// read: the retry must resend all of it.
async fn start_refusing_origin() -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding an origin");
    let addr = listener.local_addr().expect("a bound listener has an address");
    let seen: Arc<Mutex<HashSet<String>>> = Arc::default();
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            let service = service_fn(move |req: Request<Incoming>| {
                let seen = seen.clone();
                async move {
                    let id = req
                        .headers()
                        .get("x-test-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    let first = seen.lock().expect("seen lock").insert(id.to_string());
                    if first {
                        return Err(h2::Error::from(h2::Reason::REFUSED_STREAM));
                    }
                    Ok::<Response<Body>, h2::Error>(echo("second-try".into(), req).await)
                }
            });
            let connection = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service);
            tokio::spawn(async move { drop(connection.await) });
        }
    });
    (addr, accept)
}

#[tokio::test]
async fn streams_an_h2c_backend_refuses_are_retried_once_posts_with_bodies_included() {
    let (addr, accept) = start_refusing_origin().await;
    let (_manifests, shunt) = serve_host(HOST, "up", Some("kubernetes.io/h2c"), &[addr.port()], &[]).await;
    let mut sender = h2_client(&shunt).await;
    // Small, at the replay limit's scale, and several frames long.
    let bodies = [
        Bytes::new(),
        Bytes::from_static(b"hello"),
        Bytes::from(vec![7u8; 60_000]),
    ];
    for (i, body) in bodies.iter().enumerate() {
        for method in ["GET", "POST"] {
            let mut req = mk_request(method, "/refused", body.clone());
            req.headers_mut()
                .insert("x-test-id", format!("{method}-{i}").parse().expect("a valid header"));
            let reply = send(&mut sender, req).await;
            assert_eq!(reply.status, StatusCode::OK, "{method} {i}: {}", reply.text());
            let seen = reply.json();
            assert_eq!(seen["backend"], "second-try");
            assert_eq!(seen["body_len"], body.len(), "{seen}");
            assert_eq!(seen["body_fnv"], format!("{:016x}", fnv64(body)), "{seen}");
        }
    }
    accept.abort();
}

/// Waits for one request counted as 499 (client closed), and checks none was blamed on the pod.
async fn one_499_and_no_5xx(shunt: &Shunt) {
    let metrics = eventually("a 499 in /metrics", Duration::from_secs(5), async || {
        let metrics = shunt.metrics().await;
        (total(&metrics, "shunt_requests_total", ("code", "499")) == 1.0).then_some(metrics)
    })
    .await;
    assert_eq!(
        total(&metrics, "shunt_requests_total", ("code", "5xx")),
        0.0,
        "{metrics}"
    );
}

#[tokio::test]
async fn a_client_that_hangs_up_on_a_slow_request_cancels_it_at_the_pod_and_is_counted_as_499() {
    // The origin would answer only after the test's end: the request is cut short by the client.
    let origin = start_counting_origin(Duration::from_secs(60)).await;
    let (_manifests, shunt) = serve_host(HOST, "up", None, &[origin.addr.port()], &[]).await;
    let mut stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    let head = format!("GET /slow HTTP/1.1\r\nHost: {HOST}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("writing the head");
    eventually("the request at the origin", Duration::from_secs(5), async || {
        (origin.accepted.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    drop(stream);

    // shunt drops the pod's request with the client's: the origin sees its connection close.
    eventually("the origin's connection closed", Duration::from_secs(5), async || {
        (origin.closed.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    one_499_and_no_5xx(&shunt).await;
}

#[tokio::test]
async fn a_client_that_aborts_an_upload_is_counted_as_499_not_as_a_backend_failure() {
    let origin = start_counting_origin(Duration::ZERO).await;
    let (_manifests, shunt) = serve_host(HOST, "up", None, &[origin.addr.port()], &[]).await;
    let mut stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    let head = format!("POST /upload HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 100000\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("writing the head");
    stream
        .write_all(&[b'x'; 10_000])
        .await
        .expect("writing part of the body");
    // The origin has the request (so shunt is forwarding the body) before the client leaves.
    eventually("the upload at the origin", Duration::from_secs(5), async || {
        (origin.accepted.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    drop(stream);

    one_499_and_no_5xx(&shunt).await;
    let access = shunt
        .wait_for_log("the access log line", |line| line["target"] == "shunt::access")
        .await;
    let status = if access["status"].is_null() {
        &access["fields"]["status"]
    } else {
        &access["status"]
    };
    assert_eq!(*status, 499, "{access}");
    let failures = shunt
        .json_logs()
        .into_iter()
        .filter(|line| line["level"] == "WARN")
        .collect::<Vec<_>>();
    assert!(failures.is_empty(), "no warning for a client abort: {failures:?}");
}
