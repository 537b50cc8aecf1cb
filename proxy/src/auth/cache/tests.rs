use std::{
    net::{IpAddr, Ipv4Addr},
    time::{Duration, Instant},
};

use http::{HeaderMap, HeaderValue, StatusCode};
use proptest::prelude::*;

use super::*;
use crate::spec::CacheKeyPart;

fn kept(status: u16) -> Kept {
    Kept {
        status: StatusCode::from_u16(status).unwrap(),
        headers: HeaderMap::new(),
    }
}

#[test]
fn an_entry_lives_for_its_ttl_and_no_longer() {
    let mut store = Store::default();
    let now = Instant::now();
    store.put(1, kept(200), Duration::from_secs(60), now, 10);
    assert!(store.get(1, now + Duration::from_secs(59)).is_some());
    assert!(store.get(1, now + Duration::from_secs(60)).is_none());
    assert!(store.is_empty(), "an expired entry is dropped when met");
}

#[test]
fn an_entry_unused_for_thirty_minutes_is_dropped_even_within_its_ttl() {
    let mut store = Store::default();
    let now = Instant::now();
    store.put(1, kept(200), Duration::from_secs(3600), now, 10);
    assert!(store.get(1, now + Duration::from_secs(29 * 60)).is_some());
    assert!(
        store.get(1, now + Duration::from_secs(58 * 60)).is_some(),
        "used at 29 min"
    );
    assert!(store.get(1, now + Duration::from_secs(59 * 60 + 1)).is_some());
    let idle = now + Duration::from_secs(59 * 60 + 1) + INACTIVE;
    assert!(store.get(1, idle).is_none());
}

#[test]
fn the_oldest_entry_goes_first_and_a_restored_key_is_young_again() {
    let mut store = Store::default();
    let now = Instant::now();
    let ttl = Duration::from_secs(60);
    store.put(1, kept(200), ttl, now, 2);
    store.put(2, kept(200), ttl, now + Duration::from_millis(1), 2);
    store.put(1, kept(401), ttl, now + Duration::from_millis(2), 2);
    assert_eq!(store.put(3, kept(200), ttl, now + Duration::from_millis(3), 2), 1);
    let at = now + Duration::from_millis(4);
    assert!(store.get(2, at).is_none(), "2 was the oldest");
    assert_eq!(store.get(1, at).map(|k| k.status.as_u16()), Some(401));
    assert!(store.get(3, at).is_some());
}

#[test]
fn the_first_line_naming_a_status_decides_its_time() {
    let line = |codes: Vec<u16>, secs| CacheValid {
        codes,
        ttl: Duration::from_secs(secs),
    };
    let valid = [line(vec![200, 202], 300), line(vec![401], 30), line(vec![], 5)];
    assert_eq!(ttl_for(&valid, 202), Some(Duration::from_secs(300)));
    assert_eq!(ttl_for(&valid, 401), Some(Duration::from_secs(30)));
    assert_eq!(ttl_for(&valid, 500), Some(Duration::from_secs(5)));
    assert_eq!(ttl_for(&valid[..2], 500), None, "a 500 is not kept unless named");
}

#[test]
fn answers_nginx_would_not_keep_are_not_kept() {
    let rule = CacheRule::new(&AuthCache {
        scope: "s".into(),
        key: vec![],
        valid: vec![CacheValid {
            codes: vec![],
            ttl: Duration::from_secs(60),
        }],
    });
    let ok = StatusCode::OK;
    assert!(rule.ttl(ok, &HeaderMap::new()).is_some());
    for name in ["set-cookie", "cache-control", "expires", "x-accel-expires", "vary"] {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static("x"));
        assert_eq!(rule.ttl(ok, &headers), None, "{name}");
    }
}

fn request(headers: &HeaderMap) -> KeyRequest<'_> {
    KeyRequest {
        headers,
        http_host: "Shop.Example:8080",
        request_uri: "/a?b=1",
        method: "GET",
        tls: false,
        peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
    }
}

fn expanded(parts: &[CacheKeyPart], headers: &HeaderMap) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        cache_key::expand(part, &request(headers), &mut |bytes: &[u8]| {
            out.extend_from_slice(bytes)
        });
    }
    out
}

#[test]
fn key_variables_expand_as_nginx_expands_them() {
    let mut headers = HeaderMap::new();
    // alice:secret
    headers.insert("authorization", HeaderValue::from_static("Basic YWxpY2U6c2VjcmV0"));
    headers.append("cookie", HeaderValue::from_static("a=1; Session=s2"));
    headers.append("x-token", HeaderValue::from_static("t1"));
    headers.append("x-token", HeaderValue::from_static("t2"));
    let parts = [
        CacheKeyPart::RemoteUser,
        CacheKeyPart::Text("|".into()),
        CacheKeyPart::Host,
        CacheKeyPart::RequestUri,
        CacheKeyPart::Text("|".into()),
        CacheKeyPart::Header("x-token".into()),
        CacheKeyPart::Text("|".into()),
        CacheKeyPart::Cookie("session".into()),
        CacheKeyPart::Header("absent".into()),
        CacheKeyPart::Scheme,
        CacheKeyPart::RemoteAddr,
    ];
    assert_eq!(
        String::from_utf8(expanded(&parts, &headers)).unwrap(),
        "alice|shop.example/a?b=1|t1, t2|s2http127.0.0.1"
    );
    headers.insert("authorization", HeaderValue::from_static("Bearer YWxpY2U6c2VjcmV0"));
    assert_eq!(expanded(&[CacheKeyPart::RemoteUser], &headers), b"");
}

proptest! {
    #[test]
    fn the_store_never_holds_more_than_its_cap(keys in proptest::collection::vec(0u128..64, 0..200), cap in 1usize..16) {
        let mut store = Store::default();
        let now = Instant::now();
        for (i, key) in keys.iter().enumerate() {
            store.put(*key, kept(200), Duration::from_secs(60), now + Duration::from_micros(i as u64), cap);
            prop_assert!(store.len() <= cap);
            prop_assert!(store.order.len() <= 2 * cap + 1);
        }
        if let Some(last) = keys.last() {
            prop_assert!(store.get(*last, now + Duration::from_secs(1)).is_some(), "the newest entry stays");
        }
    }

    #[test]
    fn keys_differ_when_their_expansions_differ(a in "[a-z]{0,8}", b in "[a-z]{0,8}") {
        let rule = |value: &str| CacheRule::new(&AuthCache {
            scope: "scope".into(),
            key: vec![CacheKeyPart::Text(value.into()), CacheKeyPart::Header("x-token".into())],
            valid: vec![],
        });
        let headers = HeaderMap::new();
        let (ka, kb) = (rule(&a).key(&request(&headers)), rule(&b).key(&request(&headers)));
        prop_assert_eq!(ka == kb, a == b);
    }
}
