//! Graceful shutdown: on SIGTERM/SIGINT shunt stops accepting, lets requests in flight finish
//! (up to `--drain-timeout`), and exits 0.

use std::{sync::Arc, time::Duration};

use http::StatusCode;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    sync::Notify,
};

use crate::support::*;

const HOST: &str = "app.example.com";
/// Several proxy workers share each listening socket: it closes when the last one lets go.
const WORKERS: usize = 3;

async fn serve_slow_app(delay: Duration, drain_timeout: &str) -> (Backend, Manifests, Shunt) {
    let backend = Backend::http1("app").delay(delay).start().await;
    let (manifests, shunt) = serve_host(
        HOST,
        "app",
        None,
        &[backend.port()],
        &["--drain-timeout", drain_timeout, "--threads", "3"],
    )
    .await;
    (backend, manifests, shunt)
}

/// Starts a request and returns once the backend has it.
async fn request_in_flight(shunt: &Shunt, backend: &Backend) -> tokio::task::JoinHandle<Result<Reply, BoxError>> {
    let addr = shunt.http;
    let request = tokio::spawn(async move { collect(send_h1(addr, get(HOST, "/slow")).await?).await });
    eventually("the request to reach the backend", Duration::from_secs(5), async || {
        (backend.hits() == 1).then_some(())
    })
    .await;
    request
}

/// Returns once every worker has stopped accepting on the proxy listener.
async fn every_worker_draining(shunt: &Shunt) {
    let http = shunt.http.to_string();
    eventually("every worker to start draining", Duration::from_secs(5), async || {
        let draining = shunt
            .json_logs()
            .into_iter()
            .filter(|line| line["message"] == "Draining connections" && line["listener.addr"] == http.as_str());
        (draining.count() == WORKERS).then_some(())
    })
    .await;
}

#[tokio::test]
async fn sigterm_lets_a_request_in_flight_finish_refuses_new_connections_and_exits_0() {
    let (backend, _manifests, mut shunt) = serve_slow_app(Duration::from_secs(1), "5s").await;
    let request = request_in_flight(&shunt, &backend).await;

    shunt.signal("TERM");
    every_worker_draining(&shunt).await;
    let refused = TcpStream::connect(shunt.http).await;
    assert!(refused.is_err(), "a new connection after SIGTERM must be refused");

    let reply = request
        .await
        .expect("the request task")
        .expect("the request in flight gets its answer");
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.backend(), "app");
    let status = shunt.wait_exit(Duration::from_secs(5)).await;
    assert!(status.success(), "shunt exits 0 after draining, got {status}");
}

#[tokio::test]
async fn the_drain_timeout_bounds_how_long_shutdown_waits() {
    let (backend, _manifests, mut shunt) = serve_slow_app(Duration::from_secs(60), "1s").await;
    let _request = request_in_flight(&shunt, &backend).await;
    shunt.signal("TERM");
    // 1 s of drain plus slack; the backend would take a minute.
    let status = shunt.wait_exit(Duration::from_secs(5)).await;
    assert!(
        status.success(),
        "shunt exits 0 when the drain timeout cuts requests off, got {status}"
    );
}

#[tokio::test]
async fn sigint_shuts_down_cleanly_too() {
    let (_backend, _manifests, mut shunt) = serve_slow_app(Duration::ZERO, "5s").await;
    assert_eq!(shunt.get(HOST, "/").await.backend(), "app");
    shunt.signal("INT");
    let status = shunt.wait_exit(Duration::from_secs(5)).await;
    assert!(status.success(), "shunt exits 0 on SIGINT, got {status}");
    let stopping = shunt
        .wait_for_log("the shutdown log line", |line| line["message"] == "Shutting down")
        .await;
    assert_eq!(stopping["signal"], "SIGINT");
}

#[tokio::test]
async fn a_drain_that_begins_while_a_response_streams_closes_the_connection_after_it() {
    let release = Arc::new(Notify::new());
    let backend_release = release.clone();
    let backend = Backend::http1("app")
        .handler(move |_req| {
            let response = held_stream(b"first chunk\n", backend_release.clone(), b"last chunk\n");
            async move { response }
        })
        .start()
        .await;
    // A drain timeout far beyond the test's waits: only closing after the response ends passes.
    let (_manifests, mut shunt) = serve_host(
        HOST,
        "app",
        None,
        &[backend.port()],
        &["--drain-timeout", "60s", "--threads", "3"],
    )
    .await;
    let mut stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    let head = format!("GET /events HTTP/1.1\r\nHost: {HOST}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("writing the head");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(REQUEST_TIMEOUT, async {
        while !String::from_utf8_lossy(&seen).contains("first chunk") {
            let n = stream.read(&mut buf).await.expect("reading the response");
            assert_ne!(n, 0, "the response ended early: {:?}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("the first chunk arrives");

    shunt.signal("TERM");
    every_worker_draining(&shunt).await;
    release.notify_one();
    // The rest of the response, then the end of the connection: not a wait for the idle timeout.
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let n = stream.read(&mut buf).await.expect("reading the rest");
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("shunt closes the connection once the response is done");
    let seen = String::from_utf8_lossy(&seen);
    assert!(seen.starts_with("HTTP/1.1 200 "), "{seen}");
    assert!(seen.contains("last chunk\n") && seen.ends_with("0\r\n\r\n"), "{seen}");
    let status = shunt.wait_exit(Duration::from_secs(5)).await;
    assert!(status.success(), "shunt exits 0 after draining, got {status}");
}
