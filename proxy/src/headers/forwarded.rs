//! X-Forwarded-For/-Proto/-Host/-Port, `Forwarded`, X-Real-IP and X-Request-Id.
//!
//! Incoming forwarding headers are believed only from peers in `--trusted-proxies`; from anyone
//! else they are replaced, so a caller cannot forge its address to the backend.

use std::{net::IpAddr, ops::Range, str::FromStr};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use ipnet::IpNet;

use super::{
    client_ip::client_from_chain,
    ip_text::{MAX_LEN, push_ip},
    rfc7239::{push_element, set_forwarded_header},
};

static X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
static X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
static X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
static X_FORWARDED_PORT: HeaderName = HeaderName::from_static("x-forwarded-port");
static X_REAL_IP: HeaderName = HeaderName::from_static("x-real-ip");
static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Names [`set_forwarded`] may add: X-Forwarded-For/-Proto/-Host/-Port, X-Real-IP,
/// `Forwarded` and X-Request-Id.
const ADDED: usize = 7;

/// CIDRs whose forwarding headers we keep. Empty by default: trust nobody.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Vec<IpNet>);

/// What we know about the hop the request arrived on.
pub struct ForwardedContext<'a> {
    pub peer: IpAddr,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The Host (or `:authority`) as the caller sent it, port included.
    pub host: &'a str,
}

impl TrustedProxies {
    pub fn new(nets: Vec<IpNet>) -> Self {
        TrustedProxies(nets)
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }
}

impl FromStr for TrustedProxies {
    type Err = ipnet::AddrParseError;

    /// Comma-separated CIDRs or bare addresses.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let nets = s
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                part.parse::<IpNet>()
                    .or_else(|e| part.parse::<IpAddr>().map(IpNet::from).map_err(|_| e))
            })
            .collect::<Result<_, _>>()?;
        Ok(TrustedProxies(nets))
    }
}

/// An IPv4-mapped IPv6 peer (dual-stack sockets) is matched as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Sets the forwarding headers on a request about to go upstream. Returns its X-Request-Id
/// (the caller's or a new one), for the access log.
pub fn set_forwarded(headers: &mut HeaderMap, ctx: &ForwardedContext<'_>, trusted: &TrustedProxies) -> HeaderValue {
    // Up to seven new names: grow the map once, not once per insert that crosses its load
    // factor (each growth rehashes every entry). Past the map's size cap the inserts below
    // still work or fail as they would without this.
    let _ = headers.try_reserve(ADDED);
    let peer = canonical(ctx.peer);
    let peer_trusted = trusted.contains(peer);
    // Only a trusted proxy's chain is extended; anyone else's is dropped.
    let prior_chain = if peer_trusted {
        joined(headers, &X_FORWARDED_FOR)
    } else {
        None
    };

    // Every value we add is written into one buffer and split from it: one allocation per
    // request instead of one per value, and the copy of the headers kept for a retry counts
    // references to it instead of copying each value (measured under callgrind: see the commit).
    // Room for the chain, three addresses, the host three times (once quoted) and the fixed text.
    let room = prior_chain.as_ref().map_or(0, String::len) + 3 * (MAX_LEN + ctx.host.len()) + 96;
    let mut text = Vec::with_capacity(room);
    let xff = appended(&mut text, |out| {
        if let Some(chain) = &prior_chain {
            out.extend_from_slice(chain.as_bytes());
            out.extend_from_slice(b", ");
        }
        push_ip(out, peer);
    });
    let real_ip = match &prior_chain {
        // The peer, which X-Forwarded-For ends with.
        None => xff.clone(),
        Some(chain) => appended(&mut text, |out| push_ip(out, client_from_chain(chain, peer, trusted))),
    };
    let forwarded = appended(&mut text, |out| push_element(out, peer, ctx.scheme, ctx.host));
    let host = appended(&mut text, |out| out.extend_from_slice(ctx.host.as_bytes()));
    let request_id = appended(&mut text, push_request_id);
    let text = Bytes::from(text);
    // Only a host that is no valid field value (never one that came in a request) fails here.
    let value = |range: Range<usize>| HeaderValue::from_maybe_shared(text.slice(range)).ok();

    set(headers, &X_FORWARDED_FOR, value(xff));
    set(headers, &X_REAL_IP, value(real_ip));
    set_forwarded_header(headers, value(forwarded), peer_trusted);
    if !(peer_trusted && headers.contains_key(&X_FORWARDED_PROTO)) {
        headers.insert(X_FORWARDED_PROTO.clone(), HeaderValue::from_static(ctx.scheme));
    }
    if !(peer_trusted && headers.contains_key(&X_FORWARDED_HOST)) {
        set(headers, &X_FORWARDED_HOST, value(host.clone()));
    }
    if !(peer_trusted && headers.contains_key(&X_FORWARDED_PORT)) {
        let port = match port_of(ctx.host) {
            // The port ends the host.
            Some(port) => value(host.end - port.len()..host.end),
            None => Some(HeaderValue::from_static(if ctx.scheme == "https" {
                "443"
            } else {
                "80"
            })),
        };
        set(headers, &X_FORWARDED_PORT, port);
    }
    // One lookup: keep the caller's id (then the one written above goes unused), or take ours.
    let new_id = || value(request_id).expect("hex digits are a valid header value");
    headers.entry(&X_REQUEST_ID).or_insert_with(new_id).clone()
}

/// Where `write` put its bytes at the end of `text`.
fn appended(text: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) -> Range<usize> {
    let start = text.len();
    write(text);
    start..text.len()
}

/// Inserts `value`, or removes the header when there is none to set.
fn set(headers: &mut HeaderMap, name: &HeaderName, value: Option<HeaderValue>) {
    match value {
        Some(value) => {
            headers.insert(name.clone(), value);
        }
        None => {
            headers.remove(name);
        }
    }
}

/// All values of a possibly repeated header as one comma-separated list.
fn joined(headers: &HeaderMap, name: &HeaderName) -> Option<String> {
    let values: Vec<&str> = headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect();
    if values.is_empty() {
        None
    } else {
        Some(values.join(", "))
    }
}

fn port_of(host: &str) -> Option<&str> {
    let after_bracket = host.rfind(']').map_or(0, |i| i + 1);
    let (_, port) = host[after_bracket..].rsplit_once(':')?;
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        Some(port)
    } else {
        None
    }
}

/// 128 random bits as 32 hex digits.
fn push_request_id(out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = fastrand::u128(..);
    out.extend((0..32).map(|i| HEX[((bits >> (4 * i)) & 0xf) as usize]));
}

/// Keep the `Host` header a backend sees the caller's, even when the caller spoke HTTP/2.
pub fn host_header(host: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(host).ok()
}

#[cfg(test)]
mod tests;
