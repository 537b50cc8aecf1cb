use std::io;

use http::{HeaderMap, Method, StatusCode};

use super::*;
use crate::{
    proxy::retry::{Decision, classify},
    spec::{BudgetOptions, RetryPolicy},
};

static POLICY: std::sync::LazyLock<RetryPolicy> = std::sync::LazyLock::new(RetryPolicy::default);

fn mk_upstream(endpoints: usize) -> Upstream {
    let endpoints = (0..endpoints)
        .map(|i| std::sync::Arc::new(crate::upstream::Endpoint::new(([10, 0, 0, i as u8], 80).into())))
        .collect();
    Upstream::new("ns/web:80", Default::default(), endpoints, Default::default())
}

fn mk_rule(error: bool, timeout: bool, statuses: &[u16], tries: u32) -> NextUpstream {
    NextUpstream {
        error,
        timeout,
        statuses: statuses.to_vec(),
        tries,
        ..NextUpstream::OFF
    }
}

fn mk_retries<'a>(policy: &'a RetryPolicy, rule: &'a NextUpstream, method: Method) -> Retries<'a> {
    Retries::new(policy, 3, &method, &HeaderMap::new()).under(Some(rule), &method)
}

fn refused() -> UpstreamError {
    UpstreamError::Connect(Box::new(io::Error::from(io::ErrorKind::ConnectionRefused)))
}

fn reset() -> UpstreamError {
    UpstreamError::Request(Box::new(H1Error::ClosedBeforeResponse))
}

fn head_timeout() -> UpstreamError {
    UpstreamError::Timeout(Duration::from_secs(1))
}

fn invalid_head() -> UpstreamError {
    UpstreamError::Request(Box::new(H1Error::InvalidHeader("content-length")))
}

/// Why the failure goes again, or `None` when it is the answer.
fn decide(error: UpstreamError, upstream: &Upstream, endpoint: usize, retries: &mut Retries<'_>) -> Option<Why> {
    match classify(error, upstream, endpoint, retries, false, || Some(RequestBody::Empty)) {
        Decision::Retry { why, .. } => Some(why),
        Decision::Fail(_) => None,
    }
}

#[test]
fn off_sends_nothing_again_not_even_after_a_refused_connect() {
    let upstream = mk_upstream(3);
    let off = NextUpstream::OFF;
    let mut retries = mk_retries(&POLICY, &off, Method::GET);
    assert_eq!(decide(refused(), &upstream, 0, &mut retries), None);
    assert_eq!(retries.attempts(), 1);
}

#[test]
fn each_failure_goes_again_only_under_its_own_condition() {
    let upstream = mk_upstream(4);
    let errors_only = mk_rule(true, false, &[], 3);
    let mut retries = mk_retries(&POLICY, &errors_only, Method::GET);
    assert_eq!(decide(head_timeout(), &upstream, 0, &mut retries), None);
    assert_eq!(
        decide(UpstreamError::connect_timeout(), &upstream, 0, &mut retries),
        None
    );
    assert_eq!(decide(invalid_head(), &upstream, 0, &mut retries), None);
    assert_eq!(decide(reset(), &upstream, 0, &mut retries), Some(Why::StaleConnection));

    let timeouts_only = mk_rule(false, true, &[], 3);
    let mut retries = mk_retries(&POLICY, &timeouts_only, Method::GET);
    assert_eq!(decide(refused(), &upstream, 0, &mut retries), None);
    assert_eq!(decide(reset(), &upstream, 1, &mut retries), None);
    let connect = decide(UpstreamError::connect_timeout(), &upstream, 2, &mut retries);
    assert_eq!(connect, Some(Why::ConnectFailed));
    assert_eq!(decide(head_timeout(), &upstream, 3, &mut retries), Some(Why::Timeout));

    let invalid = NextUpstream {
        invalid_header: true,
        ..mk_rule(false, false, &[], 3)
    };
    let mut retries = mk_retries(&POLICY, &invalid, Method::GET);
    assert_eq!(
        decide(invalid_head(), &upstream, 0, &mut retries),
        Some(Why::InvalidHeader)
    );
}

#[test]
fn the_tries_count_the_first_and_every_kind_of_retry() {
    let upstream = mk_upstream(4);
    let rule = mk_rule(true, true, &[503], 3);
    let mut retries = mk_retries(&POLICY, &rule, Method::GET);
    assert_eq!(decide(refused(), &upstream, 0, &mut retries), Some(Why::ConnectFailed));
    let body = on_status(&mut retries, &upstream, 1, StatusCode::SERVICE_UNAVAILABLE, || {
        Some(RequestBody::Empty)
    });
    assert!(body.is_some());
    assert_eq!(retries.attempts(), 3);
    assert_eq!(decide(reset(), &upstream, 2, &mut retries), None, "three tries spent");
    assert_eq!(retries.tried(), &[0, 1, 2]);
}

#[test]
fn post_goes_again_after_it_was_sent_only_with_non_idempotent() {
    let upstream = mk_upstream(3);
    let rule = mk_rule(true, true, &[502], 3);
    let mut post = mk_retries(&POLICY, &rule, Method::POST);
    assert_eq!(decide(reset(), &upstream, 0, &mut post), None);
    assert_eq!(
        decide(refused(), &upstream, 1, &mut post),
        Some(Why::ConnectFailed),
        "nothing was sent"
    );
    let status = on_status(&mut post, &upstream, 2, StatusCode::BAD_GATEWAY, || {
        Some(RequestBody::Empty)
    });
    assert!(status.is_none());

    let any = NextUpstream {
        non_idempotent: true,
        ..rule
    };
    let mut post = mk_retries(&POLICY, &any, Method::POST);
    assert_eq!(decide(reset(), &upstream, 0, &mut post), Some(Why::StaleConnection));
}

#[test]
fn only_listed_statuses_are_dropped_and_a_body_that_cannot_go_again_keeps_the_answer() {
    let upstream = mk_upstream(3);
    let rule = mk_rule(true, true, &[503], 3);
    let mut retries = mk_retries(&POLICY, &rule, Method::GET);
    let internal = on_status(&mut retries, &upstream, 0, StatusCode::INTERNAL_SERVER_ERROR, || {
        Some(RequestBody::Empty)
    });
    assert!(internal.is_none());
    let unreplayable = on_status(&mut retries, &upstream, 0, StatusCode::SERVICE_UNAVAILABLE, || None);
    assert!(unreplayable.is_none());
    assert_eq!(retries.attempts(), 1);
    assert!(retries.tried().is_empty());
}

#[test]
fn a_rule_past_its_time_tries_nothing_more() {
    let upstream = mk_upstream(3);
    let rule = NextUpstream {
        within_secs: Some(0),
        ..mk_rule(true, true, &[], 3)
    };
    let mut retries = mk_retries(&POLICY, &rule, Method::GET);
    assert_eq!(decide(reset(), &upstream, 0, &mut retries), None);
}

#[test]
fn the_rules_retries_take_nothing_from_the_budget() {
    let upstream = mk_upstream(3);
    let empty = RetryPolicy {
        budget: BudgetOptions {
            ratio: 0.0,
            min_per_second: 0,
        },
        ..RetryPolicy::default()
    };
    let rule = mk_rule(true, true, &[], 3);
    let mut retries = mk_retries(&empty, &rule, Method::GET);
    assert_eq!(decide(reset(), &upstream, 0, &mut retries), Some(Why::StaleConnection));
}
