//! Broken pods behind one Service: a pod that resets every connection, one that answers 503, one
//! that stalls before its response head. Idempotent requests are retried on another endpoint
//! within the retry budget, the broken pod is ejected, and a POST whose body was sent is never
//! sent twice.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use http::{Method, Request, StatusCode};
use tokio::{io::AsyncReadExt, net::TcpListener, task::JoinHandle};

use crate::support::*;

const HOST: &str = "faults.example.com";

/// How a broken pod treats each connection once it has read a request head.
#[derive(Clone, Copy)]
enum Fault {
    /// Resets the connection (RST) without a byte of response.
    Reset,
    /// Keeps the connection open and never answers.
    Stall,
}

/// A pod on loopback that breaks every connection, counting them.
struct BrokenPod {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl BrokenPod {
    async fn start(fault: Fault) -> BrokenPod {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("bound address");
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    match fault {
                        Fault::Reset => drop(stream.set_zero_linger()),
                        // Held until the proxy gives up and closes its side.
                        Fault::Stall => while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {},
                    }
                });
            }
        });
        BrokenPod {
            addr,
            connections,
            task,
        }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }
}

impl Drop for BrokenPod {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Sends `count` requests made by `mk`, `concurrency` at a time; returns the statuses.
async fn load(shunt: &Shunt, count: usize, concurrency: usize, mk: fn() -> Request<Body>) -> Vec<StatusCode> {
    let addr = shunt.http;
    let mut statuses = Vec::with_capacity(count);
    for _ in 0..count.div_ceil(concurrency) {
        let batch: Vec<_> = (0..concurrency)
            .map(|_| tokio::spawn(async move { collect(send_h1(addr, mk()).await?).await }))
            .collect();
        for request in batch {
            let reply = request
                .await
                .expect("the request task")
                .expect("a response through shunt");
            statuses.push(reply.status);
        }
    }
    statuses
}

fn mk_get() -> Request<Body> {
    get(HOST, "/")
}

fn mk_post() -> Request<Body> {
    Request::builder()
        .method(Method::POST)
        .uri("/")
        .header("host", HOST)
        .body(full("order=1"))
        .expect("a valid request")
}

fn failures(statuses: &[StatusCode]) -> usize {
    statuses.iter().filter(|s| !s.is_success()).count()
}

#[tokio::test]
async fn idempotent_requests_see_no_failure_while_one_of_three_pods_resets_and_it_is_ejected() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let broken = BrokenPod::start(Fault::Reset).await;
    let ports = [a.port(), b.port(), broken.port()];
    let (_manifests, shunt) = serve_host(HOST, "app", None, &ports, &["--eject-after", "3"]).await;
    const REQUESTS: usize = 400;
    let statuses = load(&shunt, REQUESTS, 8, mk_get).await;
    assert_eq!(failures(&statuses), 0, "{statuses:?}");
    // Ejected after three resets in a row: its share of tries is a handful, not a third.
    let tried = broken.connections();
    assert!(
        tried * 20 < REQUESTS,
        "the resetting pod got {tried} of {REQUESTS} tries"
    );
    let metrics = shunt.metrics().await;
    let ejections = sample(&metrics, "shunt_upstream_ejections_total", &[("backend", "web/app:80")]);
    assert_eq!(ejections, Some(1.0), "{metrics}");
    let retries = sample(&metrics, "shunt_upstream_retries_total", &[("reason", "reset")]);
    assert!(retries.is_some_and(|r| r >= 1.0), "{metrics}");
}

#[tokio::test]
async fn a_stalling_pod_is_retried_after_the_timeout_and_ejected() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let broken = BrokenPod::start(Fault::Stall).await;
    let ports = [a.port(), b.port(), broken.port()];
    let args = ["--upstream-timeout", "300ms", "--eject-after", "2"];
    let (_manifests, shunt) = serve_host(HOST, "app", None, &ports, &args).await;
    const REQUESTS: usize = 120;
    let statuses = load(&shunt, REQUESTS, 4, mk_get).await;
    assert_eq!(failures(&statuses), 0, "{statuses:?}");
    let tried = broken.connections();
    assert!(
        tried * 20 < REQUESTS,
        "the stalling pod got {tried} of {REQUESTS} tries"
    );
}

#[tokio::test]
async fn a_pod_answering_503_is_ejected_when_5xx_counts() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let broken = Backend::http1("sick")
        .handler(|_req| async { text(StatusCode::SERVICE_UNAVAILABLE, "sick") })
        .start()
        .await;
    let ports = [a.port(), b.port(), broken.port()];
    let args = ["--eject-after", "3", "--eject-5xx"];
    let (_manifests, shunt) = serve_host(HOST, "app", None, &ports, &args).await;
    const REQUESTS: usize = 400;
    let statuses = load(&shunt, REQUESTS, 8, mk_get).await;
    // A 503 is an answer, passed on (not retried): only the ones before the ejection.
    let failed = failures(&statuses);
    assert!(failed * 20 < REQUESTS, "{failed} of {REQUESTS} answered 503");
    assert_eq!(broken.hits(), failed);
}

#[tokio::test]
async fn a_post_whose_body_was_sent_is_never_retried() {
    let pods = [
        BrokenPod::start(Fault::Reset).await,
        BrokenPod::start(Fault::Reset).await,
    ];
    let ports: Vec<u16> = pods.iter().map(BrokenPod::port).collect();
    let (_manifests, shunt) = serve_host(HOST, "app", None, &ports, &["--eject-after", "0"]).await;
    const REQUESTS: usize = 20;
    let statuses = load(&shunt, REQUESTS, 1, mk_post).await;
    assert!(statuses.iter().all(|s| *s == StatusCode::BAD_GATEWAY), "{statuses:?}");
    let tried: usize = pods.iter().map(BrokenPod::connections).sum();
    assert_eq!(tried, REQUESTS, "one try per POST");
}

#[tokio::test]
async fn the_retry_budget_caps_the_extra_load_when_every_pod_fails() {
    let pods = [
        BrokenPod::start(Fault::Reset).await,
        BrokenPod::start(Fault::Reset).await,
        BrokenPod::start(Fault::Reset).await,
    ];
    let ports: Vec<u16> = pods.iter().map(BrokenPod::port).collect();
    let args = [
        "--eject-after",
        "0",
        "--retry-budget-ratio",
        "0.1",
        "--retry-budget-min",
        "2",
    ];
    let (_manifests, shunt) = serve_host(HOST, "app", None, &ports, &args).await;
    const REQUESTS: usize = 200;
    let started = std::time::Instant::now();
    let statuses = load(&shunt, REQUESTS, 4, mk_get).await;
    let seconds = started.elapsed().as_secs() as usize + 1;
    assert!(statuses.iter().all(|s| *s == StatusCode::BAD_GATEWAY), "{statuses:?}");
    let tried: usize = pods.iter().map(BrokenPod::connections).sum();
    // Each second: the minimum plus a tenth of the requests of that second or the one before.
    let budget = 2 * seconds + 2 * REQUESTS / 10;
    assert!(
        tried <= REQUESTS + budget,
        "{tried} tries for {REQUESTS} requests (budget {budget})"
    );
    assert!(tried > REQUESTS, "some retries were allowed");
    // Without a budget, --retries 2 would have made it up to three tries each.
    assert!(tried < REQUESTS * 2, "{tried}");
}
