use std::{sync::Arc, time::Duration};

use super::*;
use crate::upstream::Endpoint;

fn mk_upstream(n: u8) -> Upstream {
    let endpoints = (0..n)
        .map(|i| Arc::new(Endpoint::new(([10, 0, 0, i], 80).into())))
        .collect();
    Upstream::new("ns/web:80", Default::default(), endpoints, Default::default())
}

fn mk_options(consecutive_failures: u32) -> OutlierOptions {
    OutlierOptions {
        consecutive_failures,
        base_ejection: Duration::from_secs(60),
        ..OutlierOptions::default()
    }
}

#[test]
fn an_endpoint_is_ejected_after_the_consecutive_failures() {
    let upstream = mk_upstream(4);
    let options = mk_options(3);
    assert!(!upstream.record_try(0, true, &options));
    assert!(!upstream.record_try(0, true, &options));
    assert!(upstream.record_try(0, true, &options));
    assert!(upstream.endpoints[0].health.is_ejected());
    assert_eq!(upstream.endpoints[0].health.ejections(), 1);
    assert_eq!(upstream.stats.ejections(), 1);
}

#[test]
fn an_answer_between_failures_starts_the_count_again() {
    let upstream = mk_upstream(4);
    let options = mk_options(3);
    upstream.record_try(1, true, &options);
    upstream.record_try(1, true, &options);
    upstream.record_try(1, false, &options);
    assert_eq!(upstream.endpoints[1].health.failures(), 0);
    upstream.record_try(1, true, &options);
    upstream.record_try(1, true, &options);
    assert!(!upstream.endpoints[1].health.is_ejected());
}

#[test]
fn no_more_than_the_cap_of_endpoints_is_ejected_at_once() {
    let upstream = mk_upstream(5);
    let options = mk_options(1);
    for i in 0..5 {
        upstream.record_try(i, true, &options);
    }
    let out = upstream.endpoints.iter().filter(|e| e.health.is_ejected()).count();
    // 50 % of 5, rounded down.
    assert_eq!(out, 2);
}

#[test]
fn a_single_endpoint_is_never_ejected_at_the_default_cap() {
    let upstream = mk_upstream(1);
    for _ in 0..10 {
        upstream.record_try(0, true, &mk_options(1));
    }
    assert!(!upstream.endpoints[0].health.is_ejected());
}

#[test]
fn zero_consecutive_failures_turns_ejection_off() {
    let upstream = mk_upstream(3);
    for _ in 0..10 {
        upstream.record_try(0, true, &mk_options(0));
    }
    assert!(!upstream.endpoints[0].health.is_ejected());
}

#[test]
fn each_ejection_lasts_longer_than_the_one_before() {
    let upstream = mk_upstream(2);
    let options = mk_options(1);
    let health = &upstream.endpoints[0].health;
    upstream.record_try(0, true, &options);
    let first = health.ejected_until.load(Ordering::Relaxed) - nanos_since_epoch(Instant::now());
    // Over at once, as if its time had passed, then failing again.
    health.eject_for(Duration::ZERO);
    upstream.return_ejected();
    upstream.record_try(0, true, &options);
    let second = health.ejected_until.load(Ordering::Relaxed) - nanos_since_epoch(Instant::now());
    assert_eq!(health.ejections(), 2);
    assert!(
        second > first + Duration::from_secs(50).as_nanos() as u64,
        "{first} then {second}"
    );
}

#[test]
fn an_ejection_that_is_over_returns_the_endpoint_once() {
    let upstream = mk_upstream(2);
    upstream.record_try(0, true, &mk_options(1));
    upstream.endpoints[0].health.eject_for(Duration::ZERO);
    assert!(!upstream.endpoints[0].health.is_ejected());
    assert!(upstream.any_deadline());
    upstream.return_ejected();
    assert!(!upstream.any_deadline());
}
