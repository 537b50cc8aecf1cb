use std::collections::BTreeMap;

use crate::objects::{Ingress, IngressMeta};
use proptest::prelude::*;

use super::*;

fn ingress() -> Ingress {
    Ingress {
        metadata: IngressMeta {
            namespace: Some("shop".to_string()),
            name: Some("api".to_string()),
            ..IngressMeta::default()
        },
        ..Ingress::default()
    }
}

fn resolve(pairs: &[(&str, &str)]) -> Result<Option<RateLimits>, (Refusal, &'static str)> {
    let mut keys = LimitKeys::default();
    for (name, value) in pairs {
        assert!(keys.set(name, value), "{name} is a limit key");
    }
    keys.resolve(&ingress(), LimitStatus::default())
}

#[test]
fn limit_rps_is_a_per_second_zone_with_five_times_its_burst() {
    let limits = resolve(&[("limit-rps", "10")]).expect("valid").expect("limited");
    assert_eq!(limits.zone, "shop/api");
    assert_eq!(
        limits.requests,
        vec![RequestRate {
            limit: 10,
            period: RatePeriod::Second,
            burst: 50
        }]
    );
    assert_eq!(limits.connections, None);
    assert_eq!((limits.rate_status, limits.connection_status), (503, 503));
}

#[test]
fn both_rates_and_connections_in_build_rate_limit_s_order() {
    let limits = resolve(&[
        ("limit-rpm", "30"),
        ("limit-rps", "2"),
        ("limit-connections", "4"),
        ("limit-burst-multiplier", "2"),
    ])
    .expect("valid")
    .expect("limited");
    let periods: Vec<_> = limits.requests.iter().map(|r| (r.period, r.limit, r.burst)).collect();
    assert_eq!(periods, vec![(RatePeriod::Second, 2, 4), (RatePeriod::Minute, 30, 60)]);
    assert_eq!(limits.connections, Some(4));
}

#[test]
fn a_bad_burst_multiplier_keeps_the_default_but_a_bad_limit_refuses() {
    let limits = resolve(&[("limit-rps", "1"), ("limit-burst-multiplier", "x")])
        .expect("valid")
        .expect("limited");
    assert_eq!(limits.requests[0].burst, 5);
    assert_eq!(resolve(&[("limit-rps", "ten")]), Err((Refusal::Invalid, "limit-rps")));
    assert_eq!(resolve(&[("limit-rps", "-1")]), Err((Refusal::Invalid, "limit-rps")));
}

#[test]
fn zero_limits_or_only_an_allowlist_limit_nothing() {
    assert_eq!(resolve(&[("limit-rps", "0")]), Ok(None));
    assert_eq!(resolve(&[("limit-allowlist", "203.0.113.0/24")]), Ok(None));
}

#[test]
fn the_allowlist_is_exempt_unless_it_names_internal_space() {
    let limits = resolve(&[("limit-rps", "1"), ("limit-whitelist", "203.0.113.0/24, 198.51.100.7")])
        .expect("valid")
        .expect("limited");
    assert_eq!(limits.exempt.len(), 2);
    assert_eq!(
        resolve(&[("limit-rps", "1"), ("limit-allowlist", "10.0.0.0/8")]),
        Err((Refusal::Unsupported, "limit-allowlist"))
    );
    // The new name wins over the old one.
    let limits = resolve(&[
        ("limit-rps", "1"),
        ("limit-allowlist", "203.0.113.0/24"),
        ("limit-whitelist", "10.0.0.0/8"),
    ])
    .expect("valid")
    .expect("limited");
    assert_eq!(
        limits.exempt,
        vec!["203.0.113.0/24".parse::<ipnet::IpNet>().expect("net")]
    );
}

#[test]
fn the_pace_keys_and_proxy_buffering_read_together() {
    let mut keys = LimitKeys::default();
    for (name, value) in [
        ("limit-rate", "16"),
        ("limit-rate-after", "x"),
        ("proxy-buffering", "on"),
    ] {
        assert!(keys.set(name, value));
    }
    let config = super::super::pace::PaceKeys {
        after: Some(2),
        ..Default::default()
    };
    let pace = keys.pace().expect("valid").over(config);
    assert_eq!(pace, shunt_spec::ResponsePace::new(16 * 1024, 2048, true));
    // No rate at all: no zone either.
    assert_eq!(resolve(&[("limit-rate", "16")]), Ok(None));
}

#[test]
fn status_codes_are_nginx_s_range() {
    assert_eq!(status_code("429"), Some(429));
    assert_eq!(status_code(" 503 "), Some(503));
    assert_eq!(status_code("302"), None);
    assert_eq!(status_code("600"), None);
}

proptest! {
    /// Any value: digits give that limit and five times its burst; anything else is refused.
    #[test]
    fn limit_values_parse_as_atoi_with_digits_only(value in "\\PC{0,12}") {
        let result = resolve(&[("limit-rps", value.as_str())]);
        let trimmed = value.trim();
        match trimmed.parse::<u32>() {
            Ok(0) if trimmed.bytes().all(|b| b.is_ascii_digit()) => prop_assert_eq!(result, Ok(None)),
            Ok(n) if trimmed.bytes().all(|b| b.is_ascii_digit()) => {
                let limits = result.expect("valid").expect("limited");
                prop_assert_eq!(limits.requests[0].limit, n);
                prop_assert_eq!(limits.requests[0].burst, n.saturating_mul(5));
            }
            _ => prop_assert_eq!(result, Err((Refusal::Invalid, "limit-rps"))),
        }
    }
}

#[test]
fn an_ingress_with_limits_is_served_with_them() {
    let mut annotations = BTreeMap::new();
    annotations.insert("nginx.ingress.kubernetes.io/limit-rps".to_string(), "3".to_string());
    let mut ingress = ingress();
    ingress.metadata.annotations = Some(annotations.into());
    let parsed = super::super::annotations::parse(&ingress);
    assert!(parsed.refusals.is_empty(), "{:?}", parsed.refusals);
    assert_eq!(parsed.limits.map(|l| l.requests[0].limit), Some(3));
}
