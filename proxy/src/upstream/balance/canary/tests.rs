//! balancer.lua's `route_to_alternative_balancer` (lines 232-276), case by case, and the
//! weight's share over many requests.

use std::net::Ipv4Addr;

use http::HeaderMap;
use proptest::prelude::*;

use super::*;
use crate::spec::CanaryHeader;

fn mk_rule(header: Option<(&str, Option<&str>)>, cookie: Option<&str>, weight: u32) -> CanaryRule {
    CanaryRule {
        header: header.map(|(name, value)| CanaryHeader {
            name: name.to_string(),
            value: value.map(str::to_string),
        }),
        cookie: cookie.map(str::to_string),
        weight,
        weight_total: 100,
    }
}

fn mk_headers(fields: &[(&str, &str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in fields {
        headers.append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
            value.parse().expect("a value"),
        );
    }
    headers
}

fn takes_with(rule: &CanaryRule, fields: &[(&str, &str)], draw: u32) -> bool {
    let headers = mk_headers(fields);
    let vars = RequestVars {
        headers: &headers,
        target: "/",
        path: "/",
        host: "a.example.com",
        peer: Ipv4Addr::LOCALHOST.into(),
    };
    takes(rule, &vars, |_| draw)
}

#[test]
fn the_header_always_and_never_decide_before_the_cookie_and_the_weight() {
    let rule = mk_rule(Some(("x-canary", None)), Some("canary"), 100);
    assert!(takes_with(
        &rule,
        &[("x-canary", "always"), ("cookie", "canary=never")],
        100
    ));
    assert!(!takes_with(
        &rule,
        &[("x-canary", "never"), ("cookie", "canary=always")],
        1
    ));
    // Lines 251-255: another value goes on to the cookie, then the weight.
    assert!(!takes_with(
        &rule,
        &[("x-canary", "yes"), ("cookie", "canary=never")],
        1
    ));
    assert!(takes_with(&rule, &[("x-canary", "yes")], 100));
}

#[test]
fn a_header_value_is_compared_exactly_and_always_means_nothing_then() {
    let rule = mk_rule(Some(("x-canary", Some("v2"))), None, 0);
    assert!(takes_with(&rule, &[("x-canary", "v2")], 1));
    assert!(!takes_with(&rule, &[("x-canary", "V2")], 1));
    assert!(!takes_with(&rule, &[("x-canary", "always")], 1));
    // Two lines are one value joined with ", ", as nginx's $http_ variables join them.
    assert!(!takes_with(&rule, &[("x-canary", "v2"), ("x-canary", "v3")], 1));
}

#[test]
fn the_cookie_decides_with_always_and_never_and_its_name_is_matched_without_case() {
    let rule = mk_rule(None, Some("canary"), 100);
    assert!(!takes_with(&rule, &[("cookie", "a=1; Canary=never")], 1));
    assert!(takes_with(
        &rule,
        &[("cookie", "a=1"), ("cookie", "canary=always")],
        100
    ));
    assert!(takes_with(&rule, &[("cookie", "canary=other")], 100));
}

#[test]
fn weight_zero_never_takes_and_the_draw_is_compared_with_at_most() {
    assert!(!takes_with(&mk_rule(None, None, 0), &[], 1));
    assert!(takes_with(&mk_rule(None, None, 30), &[], 30));
    assert!(!takes_with(&mk_rule(None, None, 30), &[], 31));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A weight W of 100 sends about W% of N requests: within five standard deviations of the
    /// binomial mean, with a seeded generator so a failure replays.
    #[test]
    fn a_weight_sends_its_share_within_binomial_bounds(weight in 0u32..=100, seed in any::<u64>()) {
        const N: u32 = 4_000;
        let rule = mk_rule(None, None, weight);
        let mut rng = fastrand::Rng::with_seed(seed);
        let headers = HeaderMap::new();
        let vars = RequestVars { headers: &headers, target: "/", path: "/", host: "h", peer: Ipv4Addr::LOCALHOST.into() };
        let taken = (0..N).filter(|_| takes(&rule, &vars, |total| rng.u32(1..=total))).count() as f64;
        let p = f64::from(weight) / 100.0;
        let (mean, sd) = (f64::from(N) * p, (f64::from(N) * p * (1.0 - p)).sqrt());
        prop_assert!((taken - mean).abs() <= 5.0 * sd + 1.0, "{taken} of {N} at weight {weight}");
    }

    #[test]
    fn header_always_always_wins_and_never_never_does(weight in 0u32..=100, draw in 1u32..=100, cookie in "(always|never|x)") {
        let rule = mk_rule(Some(("x-canary", None)), Some("c"), weight);
        let cookie = format!("c={cookie}");
        prop_assert!(takes_with(&rule, &[("x-canary", "always"), ("cookie", &cookie)], draw));
        prop_assert!(!takes_with(&rule, &[("x-canary", "never"), ("cookie", &cookie)], draw));
    }
}
