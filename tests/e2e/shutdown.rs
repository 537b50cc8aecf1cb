//! Graceful shutdown: on SIGTERM/SIGINT shunt stops accepting, lets requests in flight finish
//! (up to `--drain-timeout`), and exits 0.

use std::time::Duration;

use http::StatusCode;
use tokio::net::TcpStream;

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

#[tokio::test]
async fn sigterm_lets_a_request_in_flight_finish_refuses_new_connections_and_exits_0() {
    let (backend, _manifests, mut shunt) = serve_slow_app(Duration::from_secs(1), "5s").await;
    let request = request_in_flight(&shunt, &backend).await;

    shunt.signal("TERM");
    let http = shunt.http.to_string();
    eventually(
        "every worker to stop accepting on the proxy listener",
        Duration::from_secs(5),
        async || {
            let draining = shunt
                .json_logs()
                .into_iter()
                .filter(|line| line["message"] == "Draining connections" && line["listener.addr"] == http.as_str());
            (draining.count() == WORKERS).then_some(())
        },
    )
    .await;
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
