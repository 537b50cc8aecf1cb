//! Addresses as header text, written straight into the buffer the header values are split from.
//!
//! Every proxied request writes the peer's address two or three times (X-Forwarded-For,
//! X-Real-IP, `Forwarded`). Going through `Display` costs a formatter per octet; an IPv4
//! address is written here digit by digit instead. IPv6 keeps `Display` (RFC 5952's zero
//! compression is not worth a second implementation).

use std::{cell::RefCell, io::Write as _, net::IpAddr};

use bytes::Bytes;
use http::HeaderValue;

/// Longest textual address: an IPv4-mapped IPv6 one with all groups, `ffff:…:255.255.255.255`.
pub(super) const MAX_LEN: usize = 45;

/// Appends `ip` as `Display` writes it.
pub(super) fn push_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            // Written on the stack and appended once: a push per digit checks the Vec's
            // capacity for each.
            let mut text = [0u8; 15];
            let mut len = 0;
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    text[len] = b'.';
                    len += 1;
                }
                len += put_octet(&mut text[len..], octet);
            }
            out.extend_from_slice(&text[..len]);
        }
        IpAddr::V6(v6) => {
            // Writing to a Vec cannot fail.
            let _ = write!(out, "{v6}");
        }
    }
}

thread_local! {
    /// The last caller's address as a field value, per worker thread. Requests come in runs
    /// from one caller (a keep-alive connection's, a node's clients), and for those the value
    /// is a reference count instead of its digits written and every byte checked again.
    static LAST_PEER: RefCell<Option<(IpAddr, HeaderValue)>> = const { RefCell::new(None) };
}

/// `ip`'s text as a field value (X-Forwarded-For and X-Real-IP without a trusted chain).
pub(super) fn peer_value(ip: IpAddr) -> HeaderValue {
    LAST_PEER.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((cached, value)) = &*last
            && *cached == ip
        {
            return value.clone();
        }
        let mut text = Vec::with_capacity(MAX_LEN);
        push_ip(&mut text, ip);
        let value = HeaderValue::from_maybe_shared(Bytes::from(text)).expect("an address is a field value");
        *last = Some((ip, value.clone()));
        value
    })
}

/// Writes `octet`'s digits at the start of `out` (room for three); how many.
fn put_octet(out: &mut [u8], octet: u8) -> usize {
    let mut len = 0;
    if octet >= 100 {
        out[len] = b'0' + octet / 100;
        len += 1;
    }
    if octet >= 10 {
        out[len] = b'0' + octet / 10 % 10;
        len += 1;
    }
    out[len] = b'0' + octet % 10;
    len + 1
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use http::HeaderValue;
    use proptest::prelude::*;

    use super::*;

    fn text(ip: IpAddr) -> String {
        let mut out = Vec::new();
        push_ip(&mut out, ip);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ipv4_octets_are_written_without_leading_zeros() {
        assert_eq!(text("0.0.0.0".parse().unwrap()), "0.0.0.0");
        assert_eq!(text("10.0.99.255".parse().unwrap()), "10.0.99.255");
        assert_eq!(text("127.100.9.10".parse().unwrap()), "127.100.9.10");
    }

    #[test]
    fn ipv6_is_written_as_display_writes_it() {
        assert_eq!(text("2001:db8::1".parse().unwrap()), "2001:db8::1");
        assert_eq!(text("::ffff:10.0.0.1".parse().unwrap()), "::ffff:10.0.0.1");
    }

    proptest! {
        #[test]
        fn every_ipv4_address_reads_as_display_writes_it(bits: u32) {
            let ip = IpAddr::V4(Ipv4Addr::from(bits));
            prop_assert_eq!(text(ip), ip.to_string());
        }

        /// Whatever the order of callers, each value is its own caller's text, never the
        /// previous one's.
        #[test]
        fn a_peer_value_is_that_peers_text(octets in prop::collection::vec(0u8..3, 1..12), v6: bool) {
            for last in octets {
                let ip = if v6 {
                    IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, u16::from(last)))
                } else {
                    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
                };
                let value = peer_value(ip);
                prop_assert_eq!(value.to_str().unwrap(), ip.to_string());
            }
        }

        #[test]
        fn every_address_fits_and_makes_a_header_value(bits: u128, v4: bool) {
            let ip = if v4 { IpAddr::V4(Ipv4Addr::from(bits as u32)) } else { IpAddr::V6(Ipv6Addr::from(bits)) };
            let mut out = Vec::new();
            push_ip(&mut out, ip);
            let value = HeaderValue::from_bytes(&out).unwrap();
            prop_assert!(value.len() <= MAX_LEN);
            prop_assert_eq!(value.to_str().unwrap(), ip.to_string());
        }
    }
}
