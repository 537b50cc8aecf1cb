use super::*;
use crate::spec::{BudgetOptions, OutlierOptions};
use crate::upstream::is_going_away;

fn mk_error(source: impl StdError + Send + Sync + 'static) -> UpstreamError {
    UpstreamError::Request(Box::new(source))
}

#[test]
fn a_refused_reason_made_here_is_not_a_reset_from_the_pod() {
    let error = mk_error(h2::Error::from(Reason::REFUSED_STREAM));
    // `From<Reason>` builds a local reason, not a reset received from the pod.
    assert!(!never_processed(&error));
}

#[test]
fn an_io_reset_is_stale_but_not_unprocessed() {
    let error = mk_error(io::Error::from(io::ErrorKind::ConnectionReset));
    assert!(is_stale_connection(&error));
    assert!(!never_processed(&error));
    assert!(!is_going_away(&error));
}

#[test]
fn a_close_before_any_response_byte_is_stale_but_not_unprocessed() {
    let error = mk_error(H1Error::ClosedBeforeResponse);
    assert!(is_stale_connection(&error));
    assert!(!never_processed(&error));
}

#[test]
fn a_connection_closed_before_the_request_was_written_is_never_processed() {
    let error = mk_error(H1Error::NotWritten(io::Error::from(io::ErrorKind::BrokenPipe)));
    assert!(never_processed(&error));
}

#[test]
fn io_kinds_under_our_http1_errors_keep_their_meaning() {
    let reset = mk_error(H1Error::Io(io::Error::from(io::ErrorKind::ConnectionReset)));
    assert!(is_stale_connection(&reset));
    assert!(!never_processed(&reset));
    for error in [
        H1Error::Truncated,
        H1Error::HeadTooLarge,
        H1Error::Io(io::Error::other("boom")),
    ] {
        let error = mk_error(error);
        assert!(!is_stale_connection(&error), "{error}");
        assert!(!never_processed(&error), "{error}");
    }
}

#[test]
fn an_unrelated_error_is_neither() {
    let error = mk_error(io::Error::other("boom"));
    assert!(!is_stale_connection(&error));
    assert!(!never_processed(&error));
}

static POLICY: std::sync::LazyLock<RetryPolicy> = std::sync::LazyLock::new(RetryPolicy::default);

fn mk_upstream(endpoints: usize) -> Upstream {
    let endpoints = (0..endpoints)
        .map(|i| std::sync::Arc::new(crate::upstream::Endpoint::new(([10, 0, 0, i as u8], 80).into())))
        .collect();
    Upstream::new("ns/web:80", Default::default(), endpoints, Default::default())
}

fn mk_connect_error() -> UpstreamError {
    UpstreamError::Connect(Box::new(io::Error::from(io::ErrorKind::ConnectionRefused)))
}

fn mk_stale_error() -> UpstreamError {
    mk_error(H1Error::ClosedBeforeResponse)
}

fn replay() -> Option<RequestBody> {
    Some(RequestBody::Empty)
}

fn why(decision: &Decision) -> Option<Why> {
    match decision {
        Decision::Retry { why, .. } => Some(*why),
        Decision::Fail(_) => None,
    }
}

fn failed(decision: Decision) -> ProxyError {
    match decision {
        Decision::Fail(error) => error,
        Decision::Retry { why, .. } => panic!("expected a failure, got a retry ({why})"),
    }
}

#[test]
fn a_failed_connect_goes_to_another_endpoint_until_the_attempts_run_out() {
    let upstream = mk_upstream(3);
    let mut retries = Retries::new(&POLICY, 2, &Method::POST, &HeaderMap::new());
    let first = classify(mk_connect_error(), &upstream, 0, &mut retries, false, replay);
    assert_eq!(why(&first), Some(Why::ConnectFailed));
    let second = classify(mk_connect_error(), &upstream, 2, &mut retries, false, replay);
    assert!(matches!(failed(second), ProxyError::Unreachable { .. }));
    assert_eq!(retries.tried(), &[0, 2]);
}

#[test]
fn connect_attempts_stop_at_the_number_of_endpoints() {
    let upstream = mk_upstream(1);
    let mut retries = Retries::new(&POLICY, 3, &Method::GET, &HeaderMap::new());
    let decision = classify(
        UpstreamError::connect_timeout(),
        &upstream,
        0,
        &mut retries,
        false,
        replay,
    );
    assert!(matches!(failed(decision), ProxyError::ConnectTimeout { .. }));
}

#[test]
fn a_reset_is_retried_on_other_endpoints_up_to_the_retries_and_only_when_idempotent() {
    let upstream = mk_upstream(4);
    let mut get = Retries::new(&POLICY, 3, &Method::GET, &HeaderMap::new());
    for endpoint in 0..2 {
        let decision = classify(mk_stale_error(), &upstream, endpoint, &mut get, false, replay);
        assert_eq!(why(&decision), Some(Why::StaleConnection));
    }
    assert_eq!(get.attempts(), 3);
    let third = classify(mk_stale_error(), &upstream, 2, &mut get, false, replay);
    assert!(
        matches!(failed(third), ProxyError::UpstreamFailed { .. }),
        "--retries 2 spent"
    );

    let mut post = Retries::new(&POLICY, 3, &Method::POST, &HeaderMap::new());
    let decision = classify(mk_stale_error(), &upstream, 0, &mut post, false, replay);
    assert!(matches!(failed(decision), ProxyError::UpstreamFailed { .. }));
}

#[test]
fn an_idempotency_key_makes_a_post_retryable() {
    let upstream = mk_upstream(2);
    let mut headers = HeaderMap::new();
    headers.insert("idempotency-key", "k-1".parse().unwrap());
    let mut post = Retries::new(&POLICY, 3, &Method::POST, &headers);
    let decision = classify(mk_stale_error(), &upstream, 0, &mut post, false, replay);
    assert_eq!(why(&decision), Some(Why::StaleConnection));
}

#[test]
fn a_timeout_before_the_head_is_retried_for_idempotent_requests_only() {
    let upstream = mk_upstream(3);
    let timeout = || UpstreamError::Timeout(std::time::Duration::from_secs(1));
    let mut get = Retries::new(&POLICY, 3, &Method::GET, &HeaderMap::new());
    assert_eq!(
        why(&classify(timeout(), &upstream, 0, &mut get, false, replay)),
        Some(Why::Timeout)
    );
    let mut post = Retries::new(&POLICY, 3, &Method::POST, &HeaderMap::new());
    let decision = classify(timeout(), &upstream, 0, &mut post, false, replay);
    assert!(matches!(failed(decision), ProxyError::UpstreamTimeout { .. }));
}

#[test]
fn a_reset_on_the_only_endpoint_is_retried_there() {
    let upstream = mk_upstream(1);
    let mut get = Retries::new(&POLICY, 3, &Method::GET, &HeaderMap::new());
    let decision = classify(mk_stale_error(), &upstream, 0, &mut get, false, replay);
    assert_eq!(why(&decision), Some(Why::StaleConnection));
    assert!(get.unreachable().is_empty(), "the pod is still worth a try");
}

#[test]
fn an_empty_budget_stops_retries_but_not_those_of_a_failed_connect() {
    let upstream = mk_upstream(3);
    let policy = RetryPolicy {
        budget: BudgetOptions {
            ratio: 0.0,
            min_per_second: 0,
        },
        ..RetryPolicy::default()
    };
    let mut get = Retries::new(&policy, 3, &Method::GET, &HeaderMap::new());
    let decision = classify(mk_stale_error(), &upstream, 0, &mut get, false, replay);
    assert!(matches!(failed(decision), ProxyError::UpstreamFailed { .. }));
    assert_eq!(upstream.stats.retries(Why::StaleConnection.as_label()), 0);
    let decision = classify(mk_connect_error(), &upstream, 1, &mut get, false, replay);
    assert_eq!(why(&decision), Some(Why::ConnectFailed));
}

#[test]
fn failures_of_the_pod_count_towards_its_ejection_but_a_client_abort_does_not() {
    let upstream = mk_upstream(4);
    let policy = RetryPolicy {
        outlier: OutlierOptions {
            consecutive_failures: 2,
            ..OutlierOptions::default()
        },
        ..RetryPolicy::default()
    };
    let mut get = Retries::new(&policy, 3, &Method::GET, &HeaderMap::new());
    classify(mk_stale_error(), &upstream, 0, &mut get, true, replay);
    classify(mk_stale_error(), &upstream, 0, &mut get, true, replay);
    assert!(!upstream.endpoints[0].health.is_ejected());
    classify(mk_connect_error(), &upstream, 0, &mut get, false, replay);
    classify(mk_stale_error(), &upstream, 0, &mut get, false, replay);
    assert!(upstream.endpoints[0].health.is_ejected());
}

#[test]
fn a_request_the_pod_never_processed_is_retried_once_whatever_the_method() {
    let upstream = mk_upstream(2);
    let mut retries = Retries::new(&POLICY, 3, &Method::POST, &HeaderMap::new());
    let not_written = || mk_error(H1Error::NotWritten(io::Error::from(io::ErrorKind::BrokenPipe)));
    let first = classify(not_written(), &upstream, 0, &mut retries, false, replay);
    assert_eq!(why(&first), Some(Why::NeverProcessed));
    let second = classify(not_written(), &upstream, 0, &mut retries, false, replay);
    assert!(matches!(failed(second), ProxyError::UpstreamFailed { .. }));
}

#[test]
fn a_body_that_cannot_be_sent_again_is_not_retried() {
    let upstream = mk_upstream(3);
    let mut retries = Retries::new(&POLICY, 3, &Method::GET, &HeaderMap::new());
    let decision = classify(mk_connect_error(), &upstream, 0, &mut retries, false, || None);
    assert!(matches!(failed(decision), ProxyError::Unreachable { .. }));
    let decision = classify(mk_stale_error(), &upstream, 1, &mut retries, false, || None);
    assert!(matches!(failed(decision), ProxyError::UpstreamFailed { .. }));
}

#[test]
fn a_client_that_went_away_is_blamed_before_any_retry() {
    let upstream = mk_upstream(3);
    let mut retries = Retries::new(&POLICY, 3, &Method::GET, &HeaderMap::new());
    let decision = classify(mk_connect_error(), &upstream, 0, &mut retries, true, replay);
    assert!(matches!(failed(decision), ProxyError::ClientAborted));
    assert!(retries.tried().is_empty(), "no endpoint is blamed for the client");
}
