//! X-Forwarded-For/-Proto/-Host/-Port, `Forwarded`, X-Real-IP and X-Request-Id.
//!
//! Incoming forwarding headers are believed only from peers in `--trusted-proxies`; from anyone
//! else they are replaced, so a caller cannot forge its address to the backend.

use std::{net::IpAddr, str::FromStr};

use http::{HeaderMap, HeaderName, HeaderValue};
use ipnet::IpNet;

use super::{client_ip::client_from_chain, ip_text::ip_value, rfc7239::set_forwarded_header};

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
    let prior_chain = if peer_trusted {
        joined(headers, &X_FORWARDED_FOR)
    } else {
        None
    };

    // From an untrusted peer (the common case) both headers are the peer's address: one value.
    let peer_value = ip_value(peer);
    match &prior_chain {
        None => {
            headers.insert(X_FORWARDED_FOR.clone(), peer_value.clone());
            headers.insert(X_REAL_IP.clone(), peer_value);
        }
        Some(chain) => {
            let mut xff = String::with_capacity(chain.len() + 2 + peer_value.len());
            xff.push_str(chain);
            xff.push_str(", ");
            xff.push_str(peer_value.to_str().expect("an address is ASCII"));
            insert(headers, &X_FORWARDED_FOR, &xff);
            headers.insert(X_REAL_IP.clone(), ip_value(client_from_chain(chain, peer, trusted)));
        }
    }
    set_forwarded_header(headers, peer, ctx.scheme, ctx.host, peer_trusted);

    if !(peer_trusted && headers.contains_key(&X_FORWARDED_PROTO)) {
        headers.insert(X_FORWARDED_PROTO.clone(), HeaderValue::from_static(ctx.scheme));
    }
    if !(peer_trusted && headers.contains_key(&X_FORWARDED_HOST)) {
        insert(headers, &X_FORWARDED_HOST, ctx.host);
    }
    if !(peer_trusted && headers.contains_key(&X_FORWARDED_PORT)) {
        let port = port_of(ctx.host).unwrap_or(if ctx.scheme == "https" { "443" } else { "80" });
        insert(headers, &X_FORWARDED_PORT, port);
    }
    // One lookup: keep the caller's id, or make one.
    headers.entry(&X_REQUEST_ID).or_insert_with(new_request_id).clone()
}

fn insert(headers: &mut HeaderMap, name: &HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(name.clone(), value);
    } else {
        headers.remove(name);
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
fn new_request_id() -> HeaderValue {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = fastrand::u128(..);
    let mut id = [0u8; 32];
    for (i, digit) in id.iter_mut().enumerate() {
        *digit = HEX[((bits >> (4 * i)) & 0xf) as usize];
    }
    HeaderValue::from_bytes(&id).expect("hex digits are a valid header value")
}

/// Keep the `Host` header a backend sees the caller's, even when the caller spoke HTTP/2.
pub fn host_header(host: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(host).ok()
}

#[cfg(test)]
mod tests;
