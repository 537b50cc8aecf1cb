//! Endpoint choice: a refused connect moves on to another endpoint (at most three tried), and
//! power-of-two-choices on in-flight requests spreads concurrent load over every endpoint.

use std::time::Duration;

use http::StatusCode;

use crate::support::*;

const HOST: &str = "app.example.com";

async fn serve_ports(ports: &[u16]) -> (Manifests, Shunt) {
    serve_host(HOST, "app", None, ports, &[]).await
}

async fn connect_errors(shunt: &Shunt) -> f64 {
    let metrics = shunt.metrics().await;
    sample(
        &metrics,
        "shunt_upstream_connect_errors_total",
        &[("backend", "web/app:80")],
    )
    .unwrap_or_else(|| panic!("no connect error counter for web/app:80 in:\n{metrics}"))
}

#[tokio::test]
async fn a_refused_endpoint_is_retried_on_another_and_counted() {
    let alive = Backend::start("alive").await;
    let dead = RefusingPort::new();
    let (_manifests, shunt) = serve_ports(&[dead.port(), alive.port()]).await;
    const REQUESTS: usize = 20;
    for _ in 0..REQUESTS {
        assert_eq!(shunt.get(HOST, "/").await.backend(), "alive");
    }
    assert_eq!(alive.hits(), REQUESTS);
    // Each request first picks either endpoint at random: 20 misses of the dead one are a 1 in 2^20 event.
    assert!(
        connect_errors(&shunt).await >= 1.0,
        "the refused endpoint was tried and counted"
    );
}

#[tokio::test]
async fn a_request_tries_at_most_three_endpoints() {
    let dead: Vec<RefusingPort> = (0..4).map(|_| RefusingPort::new()).collect();
    let (_manifests, shunt) = serve_ports(&dead.iter().map(RefusingPort::port).collect::<Vec<_>>()).await;
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.text());
    assert_eq!(connect_errors(&shunt).await, 3.0, "the first endpoint and two others");
}

#[tokio::test]
async fn concurrent_requests_spread_over_every_endpoint() {
    let mut backends = Vec::new();
    for index in 0..10 {
        backends.push(
            Backend::http1(&format!("b{index}"))
                .delay(Duration::from_millis(300))
                .start()
                .await,
        );
    }
    let ports: Vec<u16> = backends.iter().map(Backend::port).collect();
    let (_manifests, shunt) = serve_ports(&ports).await;
    let addr = shunt.http;
    let requests: Vec<_> = (0..100)
        .map(|_| tokio::spawn(async move { collect(send_h1(addr, get(HOST, "/")).await?).await }))
        .collect();
    for request in requests {
        let reply = request
            .await
            .expect("the request task")
            .expect("a response through shunt");
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    }
    let hits: Vec<usize> = backends.iter().map(Backend::hits).collect();
    assert_eq!(hits.iter().sum::<usize>(), 100, "{hits:?}");
    assert!(hits.iter().all(|&h| h > 0), "every endpoint got work: {hits:?}");
}
