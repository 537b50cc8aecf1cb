//! Rendezvous hashing: a key keeps its endpoint while it stays, and adding one moves about
//! 1/N of the keys.

use std::{net::Ipv4Addr, sync::Arc};

use http::HeaderMap;
use proptest::prelude::*;

use super::*;
use crate::{metrics::UpstreamStats, spec::UpstreamProtocol, upstream::Endpoint};

fn mk_upstream(addrs: &[u16]) -> Upstream {
    let endpoints = addrs
        .iter()
        .map(|&last| Arc::new(Endpoint::new(([10, 0, 0, last as u8], 8080).into())))
        .collect();
    Upstream::new(
        "ns/svc:80",
        UpstreamProtocol::Http1,
        endpoints,
        UpstreamStats::default(),
    )
}

fn addr_of(upstream: &Upstream, key: u64) -> SocketAddr {
    upstream.endpoints[upstream.pick_hashed(key, &[]).expect("endpoints")].addr
}

#[test]
fn a_key_is_its_parts_joined_whatever_their_source() {
    let headers: HeaderMap = [(http::header::COOKIE, "user=42".parse().expect("value"))]
        .into_iter()
        .collect();
    let vars = RequestVars {
        headers: &headers,
        target: "/a?b=1",
        path: "/a",
        host: "h.example",
        peer: Ipv4Addr::new(192, 0, 2, 1).into(),
    };
    let key = |parts: Vec<KeyPart>| key_hash(&HashKey { parts }, &vars);
    let text = |text: &str| key(vec![KeyPart::Text(text.to_string())]);
    assert_eq!(key(vec![KeyPart::RequestUri]), text("/a?b=1"));
    assert_eq!(
        key(vec![KeyPart::Uri, KeyPart::Text("?".into()), KeyPart::Args]),
        text("/a?b=1")
    );
    assert_eq!(
        key(vec![KeyPart::Text("u-".into()), KeyPart::Cookie("user".into())]),
        text("u-42")
    );
    assert_eq!(
        key(vec![KeyPart::RemoteAddr, KeyPart::Host]),
        text("192.0.2.1h.example")
    );
    assert_eq!(key(vec![KeyPart::Header("x-missing".into())]), text(""));
}

#[test]
fn tried_endpoints_are_skipped_and_none_is_left_when_all_were() {
    let upstream = mk_upstream(&[1, 2]);
    let first = upstream.pick_hashed(7, &[]).expect("two endpoints");
    assert_eq!(upstream.pick_hashed(7, &[first]), Some(1 - first));
    assert_eq!(upstream.pick_hashed(7, &[0, 1]), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_key_keeps_its_endpoint_while_that_endpoint_stays(n in 2u16..20, removed in 0u16..20, key in any::<u64>()) {
        let all: Vec<u16> = (1..=n).collect();
        let before = addr_of(&mk_upstream(&all), key);
        let fewer: Vec<u16> = all.iter().copied().filter(|&i| i != removed % n + 1).collect();
        let after = addr_of(&mk_upstream(&fewer), key);
        if before.ip() != std::net::IpAddr::from([10, 0, 0, (removed % n + 1) as u8]) {
            prop_assert_eq!(before, after);
        }
    }

    /// Adding an endpoint to N moves about 1/(N+1) of the keys, and only to the new one.
    #[test]
    fn adding_an_endpoint_moves_about_one_in_n_keys(n in 2u16..16, seed in any::<u64>()) {
        const KEYS: usize = 4_000;
        let all: Vec<u16> = (1..=n).collect();
        let (old, new) = (mk_upstream(&all), mk_upstream(&[all.clone(), vec![n + 1]].concat()));
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut moved = 0usize;
        for _ in 0..KEYS {
            let key = rng.u64(..);
            let (before, after) = (addr_of(&old, key), addr_of(&new, key));
            if before != after {
                prop_assert_eq!(after.ip(), std::net::IpAddr::from([10, 0, 0, (n + 1) as u8]));
                moved += 1;
            }
        }
        let p = 1.0 / f64::from(n + 1);
        let (mean, sd) = (KEYS as f64 * p, (KEYS as f64 * p * (1.0 - p)).sqrt());
        prop_assert!((moved as f64 - mean).abs() <= 5.0 * sd, "{moved} of {KEYS} moved for {n} + 1");
    }
}
