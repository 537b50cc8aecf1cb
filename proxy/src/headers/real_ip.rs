//! nginx's realip module as ingress-nginx turns it on (`real_ip_recursive on`): which address is
//! the caller's when the peer is a trusted proxy. nginx's `ngx_http_get_forwarded_addr`:
//!
//! ```text
//! addr = peer; lines of the field, last first:
//!   addr untrusted ─▶ stop (nothing taken yet: addr stays the peer)
//!   right-most entry of what is left (split at ' ' and ',') ─▶ not an address ─▶ stop
//!   addr = entry; more to its left ─▶ again, else the next line
//! ```
//!
//! So the answer is the right-most address outside `proxy-real-ip-cidr`, or the left-most one
//! when all are inside; nothing left of the first untrusted or unparsable entry (the part the
//! client wrote) is ever taken. The field is the client's: at most [`MAX_ENTRIES`] entries are
//! taken, after which the last one taken stands.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use http::{HeaderMap, HeaderName};

use crate::spec::{RealIp, TrustedProxies};

/// Entries taken at most: past it the walk stops as at an unparsable entry. Proxy chains are a
/// handful of hops; the bound only keeps a hostile field from costing a walk per byte.
pub const MAX_ENTRIES: usize = 32;

/// A route's realip rule, its field name parsed once per table build.
#[derive(Clone, Debug)]
pub struct RealIpRule {
    field: HeaderName,
    every_line: bool,
    from: TrustedProxies,
}

impl RealIpRule {
    pub fn new(spec: &RealIp) -> Result<Self, String> {
        let field = HeaderName::from_bytes(spec.field.as_bytes())
            .map_err(|_| format!("real IP field {:?} is not a field name", spec.field))?;
        Ok(RealIpRule {
            field,
            every_line: spec.every_line,
            from: spec.from.clone(),
        })
    }

    /// nginx's `$remote_addr` for a request from `peer`: `None` when it stays the peer.
    pub fn client(&self, headers: &HeaderMap, peer: IpAddr) -> Option<IpAddr> {
        let mut lines = headers.get_all(&self.field).iter().map(|value| value.as_bytes());
        if self.every_line {
            walk(lines.rev(), peer, &self.from)
        } else {
            walk(lines.next().into_iter(), peer, &self.from)
        }
    }
}

/// How one line's walk ended (`ngx_http_get_forwarded_addr_internal`'s result).
enum Line {
    /// Its left-most entry taken: the next line goes on from it.
    Through,
    /// Stopped at an untrusted address (which stands) or an unparsable entry (the last taken
    /// stands).
    Stopped,
}

/// The walk over the field's lines, last first; `None` when nothing was taken.
pub(super) fn walk<'a>(lines: impl Iterator<Item = &'a [u8]>, peer: IpAddr, from: &TrustedProxies) -> Option<IpAddr> {
    let mut addr = peer;
    let mut taken = 0;
    for line in lines {
        match walk_line(line, &mut addr, from, &mut taken) {
            Line::Through => {}
            Line::Stopped => break,
        }
    }
    (taken > 0).then_some(addr)
}

/// One line, right to left, from `addr` (trusted, or nothing is read).
fn walk_line(line: &[u8], addr: &mut IpAddr, from: &TrustedProxies, taken: &mut usize) -> Line {
    let is_sep = |b: u8| b == b' ' || b == b',';
    let mut end = line.len();
    loop {
        if !from.contains(*addr) || end == 0 || *taken >= MAX_ENTRIES {
            return Line::Stopped;
        }
        // nginx never looks at the first byte as a separator: a token may start there.
        let mut last = end - 1;
        while last > 0 && is_sep(line[last]) {
            last -= 1;
        }
        let mut start = last;
        while start > 0 && !is_sep(line[start]) {
            start -= 1;
        }
        if start > 0 {
            start += 1;
        }
        let Some(ip) = parse_addr_port(&line[start..=last]) else {
            return Line::Stopped;
        };
        *addr = ip;
        *taken += 1;
        if start == 0 {
            return Line::Through;
        }
        end = start - 1;
    }
}

/// An entry as `ngx_parse_addr_port` reads it: an address, `ipv4:port`, `[address]:port`
/// (port 1 to 65535, digits only); `[address]` without a port is not one.
pub(super) fn parse_addr_port(text: &[u8]) -> Option<IpAddr> {
    if let Some(ip) = parse_addr(text) {
        return Some(ip);
    }
    let (addr, port) = match text.strip_prefix(b"[") {
        Some(rest) => {
            let close = rest.iter().position(|&b| b == b']')?;
            let port = rest[close + 1..].strip_prefix(b":")?;
            (&rest[..close], port)
        }
        None => {
            let colon = text.iter().position(|&b| b == b':')?;
            (&text[..colon], &text[colon + 1..])
        }
    };
    let port = atoi(port)?;
    if !(1..=65535).contains(&port) {
        return None;
    }
    parse_addr(addr)
}

/// `ngx_parse_addr`: IPv4 as `ngx_inet_addr` reads it, else IPv6.
fn parse_addr(text: &[u8]) -> Option<IpAddr> {
    if let Some(v4) = inet_addr(text) {
        return Some(IpAddr::V4(v4));
    }
    std::str::from_utf8(text).ok()?.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
}

/// `ngx_inet_addr`: four dot-separated decimal octets of at most 255, an empty one read as 0
/// and leading zeros allowed; 255.255.255.255 is its failure value, so never an address.
fn inet_addr(text: &[u8]) -> Option<Ipv4Addr> {
    let (mut addr, mut octet, mut dots) = (0u32, 0u32, 0);
    for &b in text {
        match b {
            b'0'..=b'9' => {
                octet = octet * 10 + u32::from(b - b'0');
                if octet > 255 {
                    return None;
                }
            }
            b'.' => {
                addr = (addr << 8) + octet;
                octet = 0;
                dots += 1;
            }
            _ => return None,
        }
    }
    if dots != 3 {
        return None;
    }
    let addr = Ipv4Addr::from((addr << 8) + octet);
    (addr != Ipv4Addr::BROADCAST).then_some(addr)
}

/// `ngx_atoi`: digits only, at least one (leading zeros allowed); large values saturate, as
/// any above 65535 is refused anyway.
fn atoi(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0u64, |value, &b| {
        b.is_ascii_digit()
            .then(|| value.saturating_mul(10).saturating_add(u64::from(b - b'0')))
    })
}

#[cfg(test)]
mod tests;
