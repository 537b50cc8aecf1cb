//! X-Forwarded-For/-Proto/-Host/-Port, `Forwarded`, X-Real-IP and X-Request-Id.
//!
//! Incoming forwarding headers are believed only from peers in `--trusted-proxies`; from anyone
//! else they are replaced, so a caller cannot forge its address to the backend.

use std::{net::IpAddr, ops::Range};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, header};

use super::{
    added::AddedFields,
    client_ip::client_from_chain,
    ip_text::{MAX_LEN, peer_value, push_ip},
    rfc7239::push_element,
};
use crate::spec::TrustedProxies;

pub(super) static X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
pub(super) static X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
pub(super) static X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
pub(super) static X_FORWARDED_PORT: HeaderName = HeaderName::from_static("x-forwarded-port");
pub(super) static X_REAL_IP: HeaderName = HeaderName::from_static("x-real-ip");
pub(super) static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// What we know about the hop the request arrived on.
pub struct ForwardedContext<'a> {
    pub peer: IpAddr,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The Host (or `:authority`) as the caller sent it, port included.
    pub host: &'a str,
    /// The field `host` was read from, if any: X-Forwarded-Host is a copy of it (a reference
    /// count), not a second check of every byte.
    pub host_field: Option<&'a HeaderValue>,
}

/// An IPv4-mapped IPv6 peer (dual-stack sockets) is matched as the IPv4 address it is.
pub(super) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// A name [`set_forwarded`] writes.
#[derive(Clone, Copy)]
enum Ours {
    For,
    RealIp,
    Forwarded,
    Proto,
    Host,
    Port,
    RequestId,
}

impl Ours {
    const ALL: [Ours; 7] = [
        Ours::For,
        Ours::RealIp,
        Ours::Forwarded,
        Ours::Proto,
        Ours::Host,
        Ours::Port,
        Ours::RequestId,
    ];

    fn name(self) -> &'static HeaderName {
        match self {
            Ours::For => &X_FORWARDED_FOR,
            Ours::RealIp => &X_REAL_IP,
            Ours::Forwarded => &header::FORWARDED,
            Ours::Proto => &X_FORWARDED_PROTO,
            Ours::Host => &X_FORWARDED_HOST,
            Ours::Port => &X_FORWARDED_PORT,
            Ours::RequestId => &X_REQUEST_ID,
        }
    }
}

/// Which of [`Ours`] the client sent, from one pass over the map's names: most requests carry
/// none, and a lookup per name would cost a hash and a probe each.
#[derive(Clone, Copy)]
struct Present(u8);

impl Present {
    fn scan(headers: &HeaderMap) -> Self {
        let mut bits = 0;
        for name in headers.keys() {
            // All of ours but `Forwarded` start with `x-`: the rest are passed over at once.
            if !name.as_str().starts_with("x-") && *name != header::FORWARDED {
                continue;
            }
            if let Some(ours) = Ours::ALL.iter().find(|ours| ours.name() == name) {
                bits |= 1 << *ours as u8;
            }
        }
        Present(bits)
    }

    fn has(self, ours: Ours) -> bool {
        self.0 & (1 << ours as u8) != 0
    }

    /// Removes the client's values of `ours`, if it sent any.
    fn remove(self, headers: &mut HeaderMap, ours: Ours) {
        if self.has(ours) {
            headers.remove(ours.name());
        }
    }
}

/// Sets the forwarding headers on a request about to go upstream: the client's values that ours
/// replace leave `headers`, ours go to `added`. Returns its X-Request-Id (the caller's or a new
/// one), for the access log.
pub fn set_forwarded(
    headers: &mut HeaderMap,
    ctx: &ForwardedContext<'_>,
    trusted: &TrustedProxies,
    added: &mut AddedFields,
) -> HeaderValue {
    let present = Present::scan(headers);
    let peer = canonical(ctx.peer);
    let peer_trusted = trusted.contains(peer);
    let prior_chain = take_replaced(headers, present, peer_trusted);
    let keep = |ours: Ours| peer_trusted && present.has(ours);
    let Written {
        text,
        xff,
        real_ip,
        forwarded,
        host,
        request_id,
    } = write_values(
        ctx,
        peer,
        prior_chain.as_deref(),
        trusted,
        !present.has(Ours::RequestId),
    );
    // Only a host that is no valid field value (never one that came in a request) fails here:
    // then that header is left out.
    let value = |range: Range<usize>| HeaderValue::from_maybe_shared(text.slice(range)).ok();
    let mut add = |ours: Ours, value: Option<HeaderValue>| {
        if let Some(value) = value {
            added.push(ours.name().clone(), value);
        }
    };

    // Without a chain both name the peer: one value, counted twice.
    let xff_value = xff.map_or_else(|| Some(peer_value(peer)), value);
    let real_ip_value = real_ip.map_or_else(|| xff_value.clone(), value);
    add(Ours::For, xff_value);
    add(Ours::RealIp, real_ip_value);
    add(Ours::Forwarded, value(forwarded));
    if !keep(Ours::Proto) {
        add(Ours::Proto, Some(HeaderValue::from_static(ctx.scheme)));
    }
    if !keep(Ours::Host) {
        // Only the field whose bytes `host` is (the same memory) stands for it.
        let field = ctx
            .host_field
            .filter(|field| std::ptr::eq(field.as_bytes(), ctx.host.as_bytes()));
        add(Ours::Host, field.cloned().or_else(|| value(host.clone())));
    }
    if !keep(Ours::Port) {
        let port = match port_of(ctx.host) {
            // The port ends the host.
            Some(port) => value(host.end - port.len()..host.end),
            None => Some(HeaderValue::from_static(if ctx.scheme == "https" {
                "443"
            } else {
                "80"
            })),
        };
        add(Ours::Port, port);
    }
    match request_id {
        // The caller's id is kept (its first value, as a map lookup gives).
        None => headers.get(&X_REQUEST_ID).cloned().expect("scanned as present"),
        Some(range) => {
            let id = value(range).expect("hex digits are a valid header value");
            add(Ours::RequestId, Some(id.clone()));
            id
        }
    }
}

/// Removes the client's values that ours replace. Returns the X-Forwarded-For chain ours
/// extends: only a trusted proxy's is, anyone else's is dropped.
fn take_replaced(headers: &mut HeaderMap, present: Present, peer_trusted: bool) -> Option<String> {
    let prior_chain = if peer_trusted && present.has(Ours::For) {
        joined(headers, &X_FORWARDED_FOR)
    } else {
        None
    };
    // Ours replace these whoever sent them. A trusted proxy's `Forwarded` elements stay, ours
    // follow them, and its X-Forwarded-Proto/-Host/-Port stand instead of ours.
    present.remove(headers, Ours::For);
    present.remove(headers, Ours::RealIp);
    if !peer_trusted {
        for ours in [Ours::Forwarded, Ours::Proto, Ours::Host, Ours::Port] {
            present.remove(headers, ours);
        }
    }
    prior_chain
}

/// Our values, written into one buffer, each where it lies in it.
struct Written {
    text: Bytes,
    /// `None`: the peer alone (see [`peer_value`]).
    xff: Option<Range<usize>>,
    /// `None`: the same as X-Forwarded-For.
    real_ip: Option<Range<usize>>,
    forwarded: Range<usize>,
    host: Range<usize>,
    request_id: Option<Range<usize>>,
}

/// Writes every value we add into one buffer, to be split from it: one allocation per request
/// instead of one per value, and the retry copy of an HTTP/2 request counts references to it
/// instead of copying each value. `new_request_id`: the client sent none, so we make one.
fn write_values(
    ctx: &ForwardedContext<'_>,
    peer: IpAddr,
    prior_chain: Option<&str>,
    trusted: &TrustedProxies,
    new_request_id: bool,
) -> Written {
    // Room for the chain, three addresses, the host three times (once quoted) and the fixed text.
    let room = prior_chain.map_or(0, str::len) + 3 * (MAX_LEN + ctx.host.len()) + 96;
    let mut text = Vec::with_capacity(room);
    // Without a chain, both are the peer's text, which `peer_value` has.
    let (xff, real_ip) = match prior_chain {
        None => (None, None),
        Some(chain) => {
            let xff = appended(&mut text, |out| {
                out.extend_from_slice(chain.as_bytes());
                out.extend_from_slice(b", ");
                push_ip(out, peer);
            });
            let client = client_from_chain(chain, peer, trusted);
            (Some(xff), Some(appended(&mut text, |out| push_ip(out, client))))
        }
    };
    let forwarded = appended(&mut text, |out| push_element(out, peer, ctx.scheme, ctx.host));
    let host = appended(&mut text, |out| out.extend_from_slice(ctx.host.as_bytes()));
    let request_id = new_request_id.then(|| appended(&mut text, push_request_id));
    Written {
        text: Bytes::from(text),
        xff,
        real_ip,
        forwarded,
        host,
        request_id,
    }
}

/// Where `write` put its bytes at the end of `text`.
pub(super) fn appended(text: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) -> Range<usize> {
    let start = text.len();
    write(text);
    start..text.len()
}

/// All values of a possibly repeated header as one comma-separated list.
pub(super) fn joined(headers: &HeaderMap, name: &HeaderName) -> Option<String> {
    let values: Vec<&str> = headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect();
    if values.is_empty() {
        None
    } else {
        Some(values.join(", "))
    }
}

/// The digits after the host's last `:`, when that colon ends the host (never one inside an
/// IPv6 literal's brackets: those are followed by `]`). Scanned back from the end: a `char`
/// search (`rfind`) costs several times more on every request.
fn port_of(host: &str) -> Option<&str> {
    let digits = host.bytes().rev().take_while(u8::is_ascii_digit).count();
    let colon = host.len().checked_sub(digits + 1)?;
    (digits > 0 && host.as_bytes()[colon] == b':').then(|| &host[colon + 1..])
}

/// 128 random bits as 32 hex digits.
/// A new X-Request-ID: 32 random hex digits, as nginx's `$request_id`.
pub fn new_request_id() -> HeaderValue {
    let mut out = Vec::with_capacity(32);
    push_request_id(&mut out);
    HeaderValue::from_bytes(&out).expect("hex digits are a field value")
}

pub(super) fn push_request_id(out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = fastrand::u128(..);
    out.extend((0..32).map(|i| HEX[((bits >> (4 * i)) & 0xf) as usize]));
}

#[cfg(test)]
mod tests;
