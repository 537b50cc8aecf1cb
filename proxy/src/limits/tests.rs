use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::spec::{RatePeriod, RequestRate};

fn spec(zone: &str, requests: Vec<RequestRate>, connections: Option<u32>) -> RateLimits {
    RateLimits {
        zone: zone.to_string(),
        requests,
        connections,
        exempt: Vec::new(),
        rate_status: 503,
        connection_status: 503,
    }
}

fn addr(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(203, 0, 113, last))
}

#[test]
fn a_zone_admits_its_burst_plus_one_at_once_per_address() {
    // limit-rpm 1, burst multiplier 5: `limit_req zone=... burst=5 nodelay`, 1 r/m.
    let rate = RequestRate {
        limit: 1,
        period: RatePeriod::Minute,
        burst: 5,
    };
    let limiter = limiter_for(&spec("ns/burst", vec![rate], None));
    let admitted = (0..10).filter(|_| limiter.admit(addr(1)).is_ok()).count();
    assert_eq!(admitted, 6);
    let refused = limiter.admit(addr(1)).expect_err("over the burst");
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.kind, LimitKind::Rate);
    // Another address has a bucket of its own.
    assert!(limiter.admit(addr(2)).is_ok());
}

#[test]
fn an_exempt_address_is_never_limited() {
    let rate = RequestRate {
        limit: 1,
        period: RatePeriod::Minute,
        burst: 0,
    };
    let mut spec = spec("ns/exempt", vec![rate], Some(1));
    spec.exempt = vec!["203.0.113.0/24".parse().expect("net")];
    let limiter = limiter_for(&spec);
    let held: Vec<_> = (0..20).map(|_| limiter.admit(addr(7)).expect("exempt")).collect();
    assert!(held.iter().all(Option::is_none));
    assert!(limiter.admit(IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1))).is_ok());
    assert!(limiter.admit(IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1))).is_err());
}

#[test]
fn requests_in_progress_are_counted_until_their_guard_drops() {
    let limiter = limiter_for(&spec("ns/conn", Vec::new(), Some(2)));
    let first = limiter.admit(addr(3)).expect("first");
    let second = limiter.admit(addr(3)).expect("second");
    let third = limiter.admit(addr(3)).expect_err("third at once");
    assert_eq!(third.kind, LimitKind::Connections);
    drop(first);
    let again = limiter.admit(addr(3)).expect("a place is free again");
    drop((second, again));
    assert!(
        lock(&limiter.in_progress).is_empty(),
        "no state is kept for idle callers"
    );
}

#[test]
fn a_refusal_by_one_rate_charges_none_of_them() {
    let per_second = RequestRate {
        limit: 100,
        period: RatePeriod::Second,
        burst: 100,
    };
    let per_minute = RequestRate {
        limit: 1,
        period: RatePeriod::Minute,
        burst: 1,
    };
    let limiter = limiter_for(&spec("ns/both", vec![per_second, per_minute], None));
    // rps: new, charged 1 (not the last limit); rpm: new, free.
    assert!(limiter.admit(addr(4)).is_ok());
    // rpm's burst of 1 takes one more.
    assert!(limiter.admit(addr(4)).is_ok());
    let excess_before = lock(&limiter.rates[0].states).get_mut(&addr(4)).map(|b| b.excess);
    assert!(limiter.admit(addr(4)).is_err());
    let excess_after = lock(&limiter.rates[0].states).get_mut(&addr(4)).map(|b| b.excess);
    assert_eq!(excess_before, excess_after, "the per-second rate was not charged");
}

#[test]
fn an_equal_spec_keeps_its_counts_across_tables() {
    let rate = RequestRate {
        limit: 1,
        period: RatePeriod::Minute,
        burst: 0,
    };
    let spec = spec("ns/kept", vec![rate], None);
    let first = limiter_for(&spec);
    assert!(first.admit(addr(5)).is_ok());
    let next = limiter_for(&spec);
    assert!(Arc::ptr_eq(&first, &next));
    assert!(next.admit(addr(5)).is_err());
}
