use std::time::{Duration, Instant};

use http::Request;

use super::{Proxy, attempt::upstream_deadline};
use crate::{body::ClientBody, server::ConnInfo};

/// The size of the future `make` returns, without making one.
fn future_size<A, F>(_make: impl Fn(A) -> F) -> usize {
    std::mem::size_of::<F>()
}

#[test]
fn the_request_future_hyper_holds_is_a_pointer_because_serving_is_boxed() {
    let conn = ConnInfo {
        peer: "127.0.0.1:1".parse().unwrap(),
        tls: false,
        port: None,
        via: None,
    };
    let serve = future_size(|(proxy, req): (Proxy, Request<ClientBody>)| proxy.serve(req, conn));
    // Every layer above (our handler, hyper's dispatcher) copies this future when it takes it.
    assert!(serve <= 16, "serve's future is {serve} bytes");
}

#[test]
fn the_upstream_deadline_counts_from_the_send_and_survives_a_timeout_past_the_clock() {
    let sent = Instant::now();
    let deadline = upstream_deadline(sent, Duration::from_secs(60));
    assert_eq!(deadline.into_std() - sent, Duration::from_secs(60));
    // A timeout past what the clock can hold must not panic the request.
    let never = upstream_deadline(sent, Duration::MAX);
    assert!(never.into_std() - sent > Duration::from_secs(29 * 365 * 86_400));
}

#[test]
fn the_boxed_request_future_is_a_small_allocation() {
    let conn = ConnInfo {
        peer: "127.0.0.1:1".parse().unwrap(),
        tls: false,
        port: None,
        via: None,
    };
    let handle = future_size(|(proxy, req): (Proxy, Request<ClientBody>)| proxy.handle(req, conn));
    // mimalloc serves up to 1 KiB from its per-size free lists; past that, an allocation
    // takes its generic path, several times the cost, on every request.
    assert!(handle <= 1024, "the request's future is {handle} bytes");
}
