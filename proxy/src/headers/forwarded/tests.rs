use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;

fn mk_ctx(peer: &str, host: &'static str) -> ForwardedContext<'static> {
    ForwardedContext {
        peer: peer.parse().unwrap(),
        scheme: "http",
        host,
        host_field: None,
    }
}

/// `set_forwarded`'s whole effect: the map as the backend sees it, with the added fields.
fn forward(headers: &mut HeaderMap, ctx: &ForwardedContext<'_>, trusted: &TrustedProxies) -> HeaderValue {
    let mut added = AddedFields::default();
    let id = set_forwarded(headers, ctx, trusted, &mut added);
    added.append_to(headers);
    id
}

fn all<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers.get_all(name).iter().map(|v| v.to_str().unwrap()).collect()
}

fn get<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("{name} is set"))
        .to_str()
        .unwrap()
}

#[test]
fn untrusted_peer_replaces_every_forwarding_header() {
    let mut headers = HeaderMap::new();
    headers.insert("x-forwarded-for", HeaderValue::from_static("6.6.6.6"));
    headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
    headers.insert("x-forwarded-host", HeaderValue::from_static("evil.example"));
    headers.insert("x-forwarded-port", HeaderValue::from_static("1"));
    headers.insert("x-real-ip", HeaderValue::from_static("6.6.6.6"));
    let id = forward(
        &mut headers,
        &mk_ctx("10.0.0.7", "shop.example.com"),
        &TrustedProxies::default(),
    );
    assert_eq!(get(&headers, "x-forwarded-for"), "10.0.0.7");
    assert_eq!(get(&headers, "x-forwarded-proto"), "http");
    assert_eq!(get(&headers, "x-forwarded-host"), "shop.example.com");
    assert_eq!(get(&headers, "x-forwarded-port"), "80");
    assert_eq!(get(&headers, "x-real-ip"), "10.0.0.7");
    assert_eq!(get(&headers, "x-request-id").len(), 32);
    assert_eq!(
        id,
        get(&headers, "x-request-id"),
        "the new id is returned for the access log"
    );
}

#[test]
fn x_forwarded_host_is_the_host_whatever_field_comes_with_it() {
    let field = HeaderValue::from_static("shop.example.com:8080");
    let other = HeaderValue::from_static("shop.example.com:8080");
    let passed = HeaderValue::from_static("evil.example");
    let host = field.to_str().unwrap();
    // The field `host` was read from, an equal field elsewhere, another host's field, none.
    for host_field in [Some(&field), Some(&other), Some(&passed), None] {
        let ctx = ForwardedContext {
            peer: "10.0.0.7".parse().unwrap(),
            scheme: "http",
            host,
            host_field,
        };
        let mut headers = HeaderMap::new();
        forward(&mut headers, &ctx, &TrustedProxies::default());
        assert_eq!(get(&headers, "x-forwarded-host"), "shop.example.com:8080");
        assert_eq!(get(&headers, "x-forwarded-port"), "8080");
    }
}

#[test]
fn trusted_peer_extends_the_chain_and_keeps_its_headers() {
    let trusted: TrustedProxies = "10.0.0.0/8, 192.168.1.1".parse().unwrap();
    let mut headers = HeaderMap::new();
    headers.append("x-forwarded-for", HeaderValue::from_static("203.0.113.9, 10.1.1.1"));
    headers.append("x-forwarded-for", HeaderValue::from_static("192.168.1.1"));
    headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
    headers.insert("x-request-id", HeaderValue::from_static("abc"));
    let id = forward(&mut headers, &mk_ctx("10.0.0.7", "shop.example.com:8080"), &trusted);
    assert_eq!(
        get(&headers, "x-forwarded-for"),
        "203.0.113.9, 10.1.1.1, 192.168.1.1, 10.0.0.7"
    );
    assert_eq!(
        get(&headers, "x-real-ip"),
        "203.0.113.9",
        "right-most untrusted address"
    );
    assert_eq!(
        all(&headers, "x-forwarded-proto"),
        ["https"],
        "the proxy's stands, ours is not added"
    );
    assert_eq!(all(&headers, "x-forwarded-port"), ["8080"]);
    assert_eq!(
        all(&headers, "x-request-id"),
        ["abc"],
        "the caller's id stands, no second one"
    );
    assert_eq!(id, "abc");
}

#[test]
fn an_untrusted_peers_forwarded_is_replaced_by_ours() {
    let mut headers = HeaderMap::new();
    headers.append("forwarded", HeaderValue::from_static("for=6.6.6.6;host=evil"));
    headers.append("forwarded", HeaderValue::from_static("for=7.7.7.7"));
    forward(
        &mut headers,
        &mk_ctx("10.0.0.7", "shop.example.com"),
        &TrustedProxies::default(),
    );
    assert_eq!(
        all(&headers, "forwarded"),
        ["for=10.0.0.7;proto=http;host=shop.example.com"]
    );
}

#[test]
fn a_trusted_peers_forwarded_is_kept_and_ours_appended() {
    let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
    let mut headers = HeaderMap::new();
    headers.append("forwarded", HeaderValue::from_static("for=203.0.113.9;proto=https"));
    forward(&mut headers, &mk_ctx("10.0.0.7", "shop.example.com"), &trusted);
    assert_eq!(
        all(&headers, "forwarded"),
        [
            "for=203.0.113.9;proto=https",
            "for=10.0.0.7;proto=http;host=shop.example.com"
        ]
    );
}

#[test]
fn every_name_ours_replace_leaves_the_map_and_is_added_once() {
    let names = [
        "x-forwarded-for",
        "x-real-ip",
        "forwarded",
        "x-forwarded-proto",
        "x-forwarded-host",
        "x-forwarded-port",
    ];
    let mut headers = HeaderMap::new();
    headers.insert("accept", HeaderValue::from_static("*/*"));
    headers.insert("x-custom", HeaderValue::from_static("kept"));
    headers.insert("x-request-id", HeaderValue::from_static("caller"));
    for name in names {
        headers.append(name, HeaderValue::from_static("forged"));
        headers.append(name, HeaderValue::from_static("forged again"));
    }
    let mut added = AddedFields::default();
    set_forwarded(
        &mut headers,
        &mk_ctx("10.0.0.7", "shop.example.com"),
        &TrustedProxies::default(),
        &mut added,
    );
    for name in names {
        assert!(!headers.contains_key(name), "{name} left the map");
        assert_eq!(
            added.iter().filter(|(added, _)| *added == name).count(),
            1,
            "{name} added once"
        );
    }
    assert_eq!(headers.len(), 3, "the client's other fields stay: {headers:?}");
    assert_eq!(all(&headers, "x-request-id"), ["caller"]);
    assert!(added.iter().all(|(name, _)| name != "x-request-id"), "no second id");
}

#[test]
fn ports_come_from_the_host_or_the_scheme() {
    assert_eq!(port_of("a.example:8443"), Some("8443"));
    assert_eq!(port_of("[::1]:81"), Some("81"));
    assert_eq!(port_of("[::1]"), None);
    assert_eq!(port_of("a.example"), None);
    assert_eq!(port_of("a.example:"), None);
    assert_eq!(port_of("a.example:8x"), None);
    assert_eq!(
        port_of("[::1:80]"),
        None,
        "a colon inside the brackets is the address's"
    );
}

/// What `port_of` means, written the direct way: the text after the last `:` outside an IPv6
/// literal's brackets, when it is all digits.
fn port_by_search(host: &str) -> Option<&str> {
    let after_bracket = host.rfind(']').map_or(0, |i| i + 1);
    let (_, port) = host[after_bracket..].rsplit_once(':')?;
    (!port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())).then_some(port)
}

proptest! {
    #[test]
    fn the_port_scan_finds_what_a_search_finds(host in "[a-z0-9:\\[\\].é]{0,16}") {
        prop_assert_eq!(port_of(&host), port_by_search(&host));
    }

    /// The values are slices of one shared buffer; each must read back as the text it stands
    /// for, whatever the host, peer and prior chain, and a host that is no field value must
    /// leave no header behind (never a neighbour's bytes).
    #[test]
    fn every_value_reads_back_as_the_text_it_stands_for(
        host in "[ -~\t\x01é]{0,40}",
        bits: u128,
        v4: bool,
        trusted: bool,
        prior in proptest::option::of("[0-9a-f.:, ]{0,30}"),
    ) {
        let peer = if v4 { IpAddr::V4(Ipv4Addr::from(bits as u32)) } else { IpAddr::V6(Ipv6Addr::from(bits)) };
        let trust = if trusted { "0.0.0.0/0, ::/0".parse().unwrap() } else { TrustedProxies::default() };
        let mut headers = HeaderMap::new();
        if let Some(prior) = &prior {
            headers.insert("x-forwarded-for", HeaderValue::from_str(prior).unwrap());
        }
        let ctx = ForwardedContext { peer, scheme: "https", host: &host, host_field: None };
        let id = forward(&mut headers, &ctx, &trust);

        let peer = canonical(peer);
        // At most one value of each: a second would be a field the pod could read instead.
        for name in ["x-forwarded-for", "x-real-ip", "x-forwarded-host", "x-forwarded-port", "x-forwarded-proto", "forwarded", "x-request-id"] {
            prop_assert!(headers.get_all(name).iter().count() <= 1, "{} repeated", name);
        }
        let text = |name: &str| headers.get(name).map(|v| v.as_bytes().to_vec());
        let (xff, real_ip) = match (&prior, trusted) {
            (Some(prior), true) => (format!("{prior}, {peer}"), client_from_chain(prior, peer, &trust)),
            _ => (peer.to_string(), peer),
        };
        prop_assert_eq!(text("x-forwarded-for"), Some(xff.into_bytes()));
        prop_assert_eq!(text("x-real-ip"), Some(real_ip.to_string().into_bytes()));
        let host_ok = HeaderValue::from_str(&host).is_ok();
        prop_assert_eq!(text("x-forwarded-host"), host_ok.then(|| host.clone().into_bytes()));
        prop_assert_eq!(text("x-forwarded-port"), Some(port_of(&host).unwrap_or("443").as_bytes().to_vec()));
        prop_assert_eq!(text("x-forwarded-proto"), Some(b"https".to_vec()));
        let mut element = Vec::new();
        push_element(&mut element, peer, "https", &host);
        let element_ok = HeaderValue::from_bytes(&element).is_ok();
        prop_assert_eq!(text("forwarded"), element_ok.then_some(element));
        prop_assert_eq!(id.len(), 32);
        prop_assert!(id.as_bytes().iter().all(u8::is_ascii_hexdigit));
        prop_assert_eq!(text("x-request-id"), Some(id.as_bytes().to_vec()));
    }
}
