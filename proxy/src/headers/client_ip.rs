//! Which address in X-Forwarded-For is the client's: the one X-Real-IP reports.
//!
//! Every entry is written by whoever handled the request before us, the client included, so
//! only entries appended by our trusted proxies are believed. The walk:
//!
//! 1. start from the peer that connected to us (trusted, or the chain would not be read);
//! 2. take entries from the right; strip a port and brackets (`203.0.113.9:51234`,
//!    `[2001:db8::1]:443`), as proxies write them;
//! 3. an entry that is not an address (`unknown`, an obfuscated name, garbage, empty): stop and
//!    keep the last address taken, which a trusted proxy wrote;
//! 4. an address outside `--trusted-proxies` is the client: stop there;
//! 5. a trusted address: take it and go on left; if the chain runs out, the left-most is used.
//!
//! So everything left of the first untrusted or unparsable entry, the part a client can
//! write, never becomes the answer.

use std::net::{IpAddr, Ipv6Addr};

use crate::spec::TrustedProxies;

/// The client address for a request from `peer` (trusted) carrying `chain`.
pub(super) fn client_from_chain(chain: &str, peer: IpAddr, trusted: &TrustedProxies) -> IpAddr {
    let mut last = peer;
    for entry in chain.rsplit(',') {
        let Some(ip) = parse_node(entry) else {
            return last;
        };
        last = ip;
        if !trusted.contains(ip) {
            return ip;
        }
    }
    last
}

/// An X-Forwarded-For entry as an address: bare IPv4 or IPv6, `ipv4:port`, `[ipv6]` or
/// `[ipv6]:port`, surrounded by optional whitespace. Anything else is `None`.
pub(super) fn parse_node(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim_matches([' ', '\t']);
    if let Some(rest) = entry.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        return ip.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    if let Ok(ip) = entry.parse::<IpAddr>() {
        return Some(ip);
    }
    // One colon: IPv4 with a port. (Bare IPv6 has several and parsed above.)
    let (ip, port) = entry.split_once(':')?;
    if !is_port(port) {
        return None;
    }
    ip.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

fn is_port(port: &str) -> bool {
    !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok()
}

#[cfg(test)]
mod tests;
