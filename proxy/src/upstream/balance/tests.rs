use std::{collections::BTreeSet, time::Duration};

use proptest::prelude::*;

use super::*;
use crate::{metrics::UpstreamStats, spec::UpstreamProtocol, upstream::Locality};

fn mk_upstream(n: u16) -> Upstream {
    let endpoints = (0..n)
        .map(|i| Arc::new(Endpoint::new(([127, 0, 0, 1], 1000 + i).into())))
        .collect();
    Upstream::new(
        "ns/svc:80",
        UpstreamProtocol::Http1,
        endpoints,
        UpstreamStats::default(),
    )
}

fn mk_preferring(n: u16, preferred: Vec<usize>) -> Upstream {
    mk_upstream(n).with_topology(preferred, vec![Locality::Other; usize::from(n)])
}

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn empty_upstream_has_nothing_to_pick() {
    assert_eq!(mk_upstream(0).pick(&[], None), None);
}

#[test]
fn tried_endpoints_are_never_picked_again() {
    let upstream = mk_upstream(3);
    for _ in 0..200 {
        let pick = upstream.pick(&[0, 2], None).expect("one endpoint left");
        assert_eq!(pick, 1);
    }
    assert_eq!(upstream.pick(&[0, 1, 2], None), None);
}

#[test]
fn busy_endpoints_are_avoided_and_all_idle_ones_get_work() {
    let upstream = mk_upstream(10);
    // Hold a guard for each pick, as concurrent requests would: p2c must spread them.
    let mut guards = Vec::new();
    for _ in 0..100 {
        let i = upstream.pick(&[], None).expect("endpoints");
        guards.push(EndpointGuard::new(upstream.endpoints[i].clone()));
    }
    let loads: Vec<u32> = upstream.endpoints.iter().map(|e| e.in_flight()).collect();
    assert!(loads.iter().all(|&l| l > 0), "every endpoint got work: {loads:?}");
    assert!(
        loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 6,
        "balanced: {loads:?}"
    );
    drop(guards);
    assert!(upstream.endpoints.iter().all(|e| e.in_flight() == 0));
}

#[test]
fn an_ejected_endpoint_gets_nothing_while_others_are_healthy() {
    let upstream = mk_upstream(3);
    upstream.endpoints[1].health.eject_for(HOUR);
    for _ in 0..300 {
        assert_ne!(upstream.pick(&[], None), Some(1));
    }
}

#[test]
fn ejected_endpoints_are_still_tried_when_nothing_else_is_left() {
    let upstream = mk_upstream(2);
    upstream.endpoints[0].health.eject_for(HOUR);
    upstream.endpoints[1].health.eject_for(HOUR);
    assert!(upstream.pick(&[], None).is_some());
    assert_eq!(upstream.pick(&[1], None), Some(0));
}

#[test]
fn an_ejection_that_is_over_puts_the_endpoint_back() {
    let upstream = mk_upstream(2);
    upstream.endpoints[0].health.eject_for(Duration::ZERO);
    let picked: BTreeSet<usize> = (0..200).filter_map(|_| upstream.pick(&[], None)).collect();
    assert_eq!(picked, BTreeSet::from([0, 1]));
    assert!(!upstream.any_deadline(), "the return was recorded");
}

#[test]
fn preferred_endpoints_get_every_request_while_usable() {
    let upstream = mk_preferring(4, vec![1, 3]);
    let picked: BTreeSet<usize> = (0..300).filter_map(|_| upstream.pick(&[], None)).collect();
    assert_eq!(picked, BTreeSet::from([1, 3]));
}

#[test]
fn the_preference_fails_open_when_its_endpoints_are_ejected_or_tried() {
    let upstream = mk_preferring(3, vec![0]);
    assert_ne!(upstream.pick(&[0], None), Some(0));
    assert!(upstream.pick(&[0], None).is_some());
    upstream.endpoints[0].health.eject_for(HOUR);
    for _ in 0..100 {
        let pick = upstream.pick(&[], None).expect("others are ready");
        assert_ne!(pick, 0);
    }
}

#[test]
fn a_new_endpoint_weighs_little_and_grows_over_the_window() {
    let mut endpoint = Endpoint::new(([127, 0, 0, 1], 80).into());
    let window = Duration::from_secs(30);
    let start = Instant::now();
    endpoint.since = crate::upstream::clock::nanos(start);
    assert_eq!(endpoint.weight(start, window), MIN_WEIGHT);
    let half = endpoint.weight(start + window / 2, window);
    assert!((half - 0.5).abs() < 1e-9, "{half}");
    assert_eq!(endpoint.weight(start + window * 2, window), 1.0);
    assert_eq!(endpoint.weight(start, Duration::ZERO), 1.0);
}

#[test]
fn with_slow_start_a_new_endpoint_gets_a_small_share() {
    // Endpoints 1 and 2 as if added long ago; 3 is new.
    let old = |port| {
        let mut e = Endpoint::new(([127, 0, 0, 1], port).into());
        let long_ago = Instant::now().checked_sub(Duration::from_secs(120));
        e.since = crate::upstream::clock::nanos(long_ago.expect("the clock has run two minutes"));
        Arc::new(e)
    };
    let endpoints = vec![old(1), old(2), Arc::new(Endpoint::new(([127, 0, 0, 1], 3).into()))];
    let upstream = Upstream::new(
        "ns/svc:80",
        UpstreamProtocol::Http1,
        endpoints,
        UpstreamStats::default(),
    );
    let picks = 2000;
    let new = (0..picks)
        .filter(|_| upstream.pick(&[], Some(Duration::from_secs(60))) == Some(2))
        .count();
    assert!(new < picks / 10, "new endpoint got {new} of {picks}");
    // Without slow start it gets its full third.
    let new = (0..picks).filter(|_| upstream.pick(&[], None) == Some(2)).count();
    assert!(new > picks / 5, "new endpoint got {new} of {picks}");
}

fn mk_state() -> impl Strategy<Value = (u16, Vec<bool>, Vec<bool>, Vec<bool>)> {
    (0u16..8).prop_flat_map(|n| {
        let n_usize = usize::from(n);
        (
            Just(n),
            proptest::collection::vec(any::<bool>(), n_usize),
            proptest::collection::vec(any::<bool>(), n_usize),
            proptest::collection::vec(any::<bool>(), n_usize),
        )
    })
}

proptest! {
    #[test]
    fn the_choice_never_takes_an_ejected_endpoint_while_a_healthy_untried_one_exists(
        (n, ejected, tried, preferred) in mk_state(),
    ) {
        let preferred: Vec<usize> = (0..usize::from(n)).filter(|&i| preferred[i]).collect();
        let upstream = mk_preferring(n, preferred.clone());
        for (i, out) in ejected.iter().enumerate() {
            if *out {
                upstream.endpoints[i].health.eject_for(HOUR);
            }
        }
        let tried: Vec<usize> = (0..usize::from(n)).filter(|&i| tried[i]).collect();
        let untried: Vec<usize> = (0..usize::from(n)).filter(|i| !tried.contains(i)).collect();
        let healthy: Vec<usize> = untried.iter().copied().filter(|&i| !ejected[i]).collect();
        let preferred_healthy: Vec<usize> = healthy.iter().copied().filter(|i| preferred.contains(i)).collect();
        for _ in 0..20 {
            let pick = upstream.pick(&tried, None);
            // Never nothing while an untried endpoint exists; never a tried one.
            prop_assert_eq!(pick.is_some(), !untried.is_empty());
            if let Some(pick) = pick {
                prop_assert!(!tried.contains(&pick));
                if !healthy.is_empty() {
                    prop_assert!(!ejected[pick], "picked ejected {} though {:?} are healthy", pick, healthy);
                }
                if !preferred_healthy.is_empty() {
                    prop_assert!(preferred_healthy.contains(&pick));
                }
            }
        }
    }
}
