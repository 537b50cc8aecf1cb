use proptest::prelude::*;

use super::*;

fn mk_trusted() -> TrustedProxies {
    "10.0.0.0/8, fd00::/8".parse().unwrap()
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn entries_parse_with_ports_and_brackets() {
    assert_eq!(parse_node("203.0.113.9"), Some(ip("203.0.113.9")));
    assert_eq!(parse_node(" 203.0.113.9:51234 "), Some(ip("203.0.113.9")));
    assert_eq!(parse_node("[2001:db8::1]:443"), Some(ip("2001:db8::1")));
    assert_eq!(parse_node("[2001:db8::1]"), Some(ip("2001:db8::1")));
    assert_eq!(parse_node("2001:db8::1"), Some(ip("2001:db8::1")));
    for garbage in [
        "unknown",
        "",
        "_hidden",
        "203.0.113.9:",
        "203.0.113.9:99999",
        "203.0.113.9:80:80",
        "[2001:db8::1]x",
        "[203.0.113.9]",
        "[2001:db8::1",
        "example.com:80",
        "\"[2001:db8::1]\"",
    ] {
        assert_eq!(parse_node(garbage), None, "{garbage:?}");
    }
}

#[test]
fn the_right_most_untrusted_address_is_the_client() {
    let peer = ip("10.0.0.1");
    let trusted = mk_trusted();
    for (chain, client) in [
        ("6.6.6.6, 203.0.113.9:51234", "203.0.113.9"),
        ("6.6.6.6, [2001:db8::1]:443", "2001:db8::1"),
        ("6.6.6.6,203.0.113.9", "203.0.113.9"),
        ("203.0.113.9, 10.0.0.2, 10.0.0.3", "203.0.113.9"),
        ("6.6.6.6, 203.0.113.9, 10.0.0.2", "203.0.113.9"),
    ] {
        assert_eq!(client_from_chain(chain, peer, &trusted), ip(client), "{chain:?}");
    }
}

#[test]
fn an_unparsable_entry_stops_the_walk_at_the_last_trusted_hop() {
    let peer = ip("10.0.0.1");
    let trusted = mk_trusted();
    for (chain, client) in [
        ("6.6.6.6, unknown", "10.0.0.1"),
        ("6.6.6.6, unknown, 10.0.0.2", "10.0.0.2"),
        ("6.6.6.6, , 10.0.0.2", "10.0.0.2"),
        ("6.6.6.6, 203.0.113.9:x", "10.0.0.1"),
        ("", "10.0.0.1"),
    ] {
        assert_eq!(client_from_chain(chain, peer, &trusted), ip(client), "{chain:?}");
    }
}

#[test]
fn a_chain_of_only_trusted_hops_gives_the_left_most() {
    assert_eq!(
        client_from_chain("10.0.0.3, 10.0.0.2", ip("10.0.0.1"), &mk_trusted()),
        ip("10.0.0.3")
    );
}

/// How a trusted proxy might write the client it saw.
fn written(client: IpAddr, port: Option<u16>) -> String {
    match (client, port) {
        (IpAddr::V4(v4), Some(port)) => format!("{v4}:{port}"),
        (IpAddr::V6(v6), Some(port)) => format!("[{v6}]:{port}"),
        (ip, None) => ip.to_string(),
    }
}

fn untrusted_ip() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        (1u8..10, any::<[u8; 3]>()).prop_map(|(a, [b, c, d])| IpAddr::from([a, b, c, d])),
        any::<[u16; 7]>().prop_map(|s| IpAddr::from([0x2001, s[0], s[1], s[2], s[3], s[4], s[5], s[6]])),
    ]
}

proptest! {
    #[test]
    fn a_client_written_prefix_never_becomes_the_client(
        prefix in "[ -~]{0,60}",
        client in prop::option::of(untrusted_ip()),
        port in prop::option::of(any::<u16>()),
        hops in prop::collection::vec(any::<[u8; 3]>(), 0..4),
    ) {
        // The trusted proxy appended what it saw of the client (an address, or `unknown` when
        // it hides it); further trusted hops appended theirs.
        let seen = client.map_or_else(|| "unknown".to_string(), |client| written(client, port));
        let mut chain = format!("{prefix}, {seen}");
        let peer = ip("10.0.0.1");
        let mut last_hop = peer;
        for [b, c, d] in &hops {
            chain.push_str(&format!(", 10.{b}.{c}.{d}"));
        }
        // Stopping at `unknown` leaves the hop that wrote it: the first one after it.
        if let Some([b, c, d]) = hops.first() {
            last_hop = IpAddr::from([10, *b, *c, *d]);
        }
        let expected = client.unwrap_or(last_hop);
        prop_assert_eq!(client_from_chain(&chain, peer, &mk_trusted()), expected, "{}", chain);
    }

    #[test]
    fn any_chain_gives_the_peer_or_an_address_from_the_chain(chain in "[ -~]{0,80}") {
        let peer = ip("10.0.0.1");
        let chosen = client_from_chain(&chain, peer, &mk_trusted());
        prop_assert!(chosen == peer || chain.split(',').any(|e| parse_node(e) == Some(chosen)));
    }

    #[test]
    fn written_addresses_parse_back(client in untrusted_ip(), port in prop::option::of(any::<u16>())) {
        prop_assert_eq!(parse_node(&written(client, port)), Some(client));
    }
}
