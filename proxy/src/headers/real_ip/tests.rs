use std::net::IpAddr;

use http::{HeaderMap, HeaderValue};
use proptest::prelude::*;

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn mk_from(text: &str) -> TrustedProxies {
    text.parse().unwrap()
}

/// The walk over one field's lines (given first to last, as the client sent them).
fn walk_lines(lines: &[&str], peer: &str, from: &str) -> Option<IpAddr> {
    let from = mk_from(from);
    walk(lines.iter().rev().map(|line| line.as_bytes()), ip(peer), &from)
}

#[test]
fn an_untrusted_peer_keeps_its_own_address() {
    assert_eq!(walk_lines(&["203.0.113.9"], "192.0.2.1", "10.0.0.0/8"), None);
}

#[test]
fn the_walk_stops_at_the_right_most_untrusted_address() {
    let from = "10.0.0.0/8";
    assert_eq!(
        walk_lines(&["6.6.6.6, 203.0.113.9, 10.0.0.2"], "10.0.0.1", from),
        Some(ip("203.0.113.9"))
    );
    // All trusted: the left-most stands.
    assert_eq!(
        walk_lines(&["10.0.0.3, 10.0.0.2"], "10.0.0.1", from),
        Some(ip("10.0.0.3"))
    );
    // Lines are one chain, the last line first.
    assert_eq!(
        walk_lines(&["6.6.6.6, 203.0.113.9", "10.0.0.2"], "10.0.0.1", from),
        Some(ip("203.0.113.9"))
    );
    assert_eq!(
        walk_lines(&["6.6.6.6", "10.0.0.2"], "10.0.0.1", from),
        Some(ip("6.6.6.6"))
    );
}

#[test]
fn an_unparsable_entry_stops_the_walk_at_the_last_address_taken() {
    let from = "10.0.0.0/8";
    assert_eq!(
        walk_lines(&["6.6.6.6, unknown, 10.0.0.2"], "10.0.0.1", from),
        Some(ip("10.0.0.2"))
    );
    // Nothing taken: the peer stays.
    assert_eq!(walk_lines(&["unknown"], "10.0.0.1", from), None);
    assert_eq!(walk_lines(&[""], "10.0.0.1", from), None);
    // An empty later line stops the walk at what the earlier one gave.
    assert_eq!(walk_lines(&["", "10.0.0.2"], "10.0.0.1", from), Some(ip("10.0.0.2")));
}

#[test]
fn entries_split_at_spaces_and_commas_and_runs_of_them() {
    let from = "10.0.0.0/8";
    assert_eq!(walk_lines(&["6.6.6.6 10.0.0.2"], "10.0.0.1", from), Some(ip("6.6.6.6")));
    assert_eq!(
        walk_lines(&["6.6.6.6, ,, 10.0.0.2 ,"], "10.0.0.1", from),
        Some(ip("6.6.6.6"))
    );
    // The first byte is never read as a separator: `,6.6.6.6` is one entry, not an address.
    assert_eq!(walk_lines(&[",6.6.6.6"], "10.0.0.1", from), None);
}

#[test]
fn entries_parse_as_ngx_parse_addr_port_reads_them() {
    for (entry, parsed) in [
        ("203.0.113.9", Some("203.0.113.9")),
        ("203.0.113.9:80", Some("203.0.113.9")),
        ("203.0.113.9:00080", Some("203.0.113.9")),
        ("[2001:db8::1]:443", Some("2001:db8::1")),
        ("[203.0.113.9]:443", Some("203.0.113.9")),
        ("2001:db8::1", Some("2001:db8::1")),
        ("010.1..2", Some("10.1.0.2")),
        ("[2001:db8::1]", None),
        ("203.0.113.9:0", None),
        ("203.0.113.9:65536", None),
        ("203.0.113.9:", None),
        ("255.255.255.255", None),
        ("1.2.3.256", None),
        ("1.2.3", None),
        ("1.2.3.4.5", None),
        ("example.com:80", None),
        ("unknown", None),
    ] {
        assert_eq!(parse_addr_port(entry.as_bytes()), parsed.map(ip), "{entry:?}");
    }
}

#[test]
fn the_rule_reads_every_line_of_x_forwarded_for_and_the_first_of_another_field() {
    let mut headers = HeaderMap::new();
    headers.append("x-forwarded-for", HeaderValue::from_static("6.6.6.6"));
    headers.append("x-forwarded-for", HeaderValue::from_static("10.0.0.2"));
    let spec = |field: &str, every_line| RealIp {
        field: field.to_string(),
        every_line,
        from: mk_from("10.0.0.0/8"),
    };
    let every = RealIpRule::new(&spec("x-forwarded-for", true)).unwrap();
    assert_eq!(every.client(&headers, ip("10.0.0.1")), Some(ip("6.6.6.6")));
    let first = RealIpRule::new(&spec("x-forwarded-for", false)).unwrap();
    assert_eq!(first.client(&headers, ip("10.0.0.1")), Some(ip("6.6.6.6")));
    headers.append("x-client-ip", HeaderValue::from_static("10.0.0.7"));
    headers.append("x-client-ip", HeaderValue::from_static("7.7.7.7"));
    let other = RealIpRule::new(&spec("x-client-ip", false)).unwrap();
    assert_eq!(other.client(&headers, ip("10.0.0.1")), Some(ip("10.0.0.7")));
    assert!(RealIpRule::new(&spec("not a name", false)).is_err());
}

#[test]
fn a_long_trusted_chain_is_walked_only_so_far() {
    let chain: Vec<String> = (1..=100).map(|i| format!("10.0.{}.{}", i / 250, i % 250)).collect();
    let line = chain.join(", ");
    let got = walk_lines(&[line.as_str()], "10.0.0.0", "10.0.0.0/8").unwrap();
    // Right to left: the 32nd entry from the right.
    assert_eq!(got, ip(&chain[100 - MAX_ENTRIES]));
}

/// The oracle: the chain as addresses (`None` for an unparsable entry), walked as the realip
/// module's documentation says: from the right, past trusted addresses only.
fn oracle(entries: &[Option<IpAddr>], peer: IpAddr, from: &TrustedProxies) -> Option<IpAddr> {
    if !from.contains(peer) {
        return None;
    }
    let mut taken = None;
    for entry in entries.iter().rev().take(MAX_ENTRIES) {
        let Some(addr) = entry else { break };
        taken = Some(*addr);
        if !from.contains(*addr) {
            break;
        }
    }
    taken
}

fn entry() -> impl Strategy<Value = Option<IpAddr>> {
    prop_oneof![
        4 => (0u8..4, 0u8..4).prop_map(|(b, c)| Some(IpAddr::from([10, 0, b, c]))),
        3 => (0u8..4).prop_map(|d| Some(IpAddr::from([203, 0, 113, d]))),
        1 => Just(None),
    ]
}

fn render(entry: &Option<IpAddr>, style: u8) -> String {
    match (entry, style % 3) {
        (None, _) => "unknown".to_string(),
        (Some(addr), 0) => addr.to_string(),
        (Some(addr), 1) => format!("{addr}:{}", 1000 + u16::from(style)),
        (Some(addr), _) => format!("[::ffff:{addr}]:{}", 1 + u16::from(style)),
    }
}

proptest! {
    #[test]
    fn the_walk_takes_only_what_trusted_proxies_appended(
        entries in prop::collection::vec(entry(), 0..40),
        styles in prop::collection::vec(any::<u8>(), 40),
        peer_trusted in any::<bool>(),
        split in 0usize..40,
    ) {
        let from = mk_from("10.0.0.0/8");
        let peer = if peer_trusted { ip("10.9.9.9") } else { ip("198.51.100.1") };
        let texts: Vec<String> = entries.iter().zip(&styles).map(|(entry, style)| render(entry, *style)).collect();
        // The same chain in one line or in two.
        let split = split.min(texts.len());
        let one = [texts.join(", ")];
        let two = [texts[..split].join(","), texts[split..].join(" ")];
        let lines: &[String] = if split == 0 || split == texts.len() { &one } else { &two };
        let from_lines = walk(lines.iter().rev().map(|line| line.as_bytes()), peer, &from);
        let mapped = |addr: IpAddr| addr.to_canonical();
        prop_assert_eq!(from_lines.map(mapped), oracle(&entries, peer, &from));
        // Whatever it is, it is never left of the first untrusted or unparsable entry.
        if let Some(found) = from_lines {
            prop_assert!(entries.iter().any(|entry| entry.map(mapped) == Some(found.to_canonical())));
        }
    }
}
