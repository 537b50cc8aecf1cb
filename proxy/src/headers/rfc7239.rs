//! The `Forwarded` header (RFC 7239): what shunt adds for its own hop.
//!
//! From an untrusted peer the caller's `Forwarded` is dropped, like its X-Forwarded-For, and
//! shunt's element is the only one; from a trusted proxy the existing elements stay and shunt's
//! is appended. Shunt's element says what X-Forwarded-For's last entry and this hop's proto
//! and host say: `for=<peer>;proto=<scheme>;host=<host>`.

use std::net::IpAddr;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, header};

use super::ip_text;

/// Replaces (`keep_existing == false`) or extends the request's `Forwarded` with our element.
pub(super) fn set_forwarded_header(
    headers: &mut HeaderMap,
    peer: IpAddr,
    scheme: &str,
    host: &str,
    keep_existing: bool,
) {
    if !keep_existing {
        headers.remove(header::FORWARDED);
    }
    // Only a host that is no valid field value (never one that came in a request) fails here.
    if let Ok(value) = HeaderValue::from_maybe_shared(Bytes::from(element(peer, scheme, host))) {
        headers.append(header::FORWARDED, value);
    }
}

/// One forwarded-element. IPv6 nodes are bracketed and quoted (RFC 7239 §6); a host that is
/// not a token (it has a `:port`, say) is a quoted-string.
fn element(peer: IpAddr, scheme: &str, host: &str) -> Vec<u8> {
    // Quoting at most doubles the host, plus its quotes.
    let mut out = Vec::with_capacity(32 + ip_text::MAX_LEN + scheme.len() + 2 * host.len());
    match peer {
        IpAddr::V4(_) => {
            out.extend_from_slice(b"for=");
            ip_text::push_ip(&mut out, peer);
        }
        IpAddr::V6(_) => {
            out.extend_from_slice(b"for=\"[");
            ip_text::push_ip(&mut out, peer);
            out.extend_from_slice(b"]\"");
        }
    }
    out.extend_from_slice(b";proto=");
    out.extend_from_slice(scheme.as_bytes());
    if !host.is_empty() {
        out.extend_from_slice(b";host=");
        push_value(&mut out, host);
    }
    out
}

/// A token as is, anything else as a quoted-string (RFC 9110 §5.6.2, §5.6.4).
fn push_value(out: &mut Vec<u8>, value: &str) {
    if value.bytes().all(is_tchar) {
        out.extend_from_slice(value.as_bytes());
        return;
    }
    out.push(b'"');
    for b in value.bytes() {
        if b == b'"' || b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.push(b'"');
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk_headers(forwarded: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in forwarded {
            headers.append(header::FORWARDED, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn all(headers: &HeaderMap) -> Vec<&str> {
        headers
            .get_all(header::FORWARDED)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect()
    }

    fn element_text(peer: IpAddr, scheme: &str, host: &str) -> String {
        String::from_utf8(element(peer, scheme, host)).unwrap()
    }

    #[test]
    fn an_untrusted_peers_forwarded_is_replaced_by_ours() {
        let mut headers = mk_headers(&["for=6.6.6.6;host=evil", "for=7.7.7.7"]);
        set_forwarded_header(
            &mut headers,
            "10.0.0.7".parse().unwrap(),
            "http",
            "shop.example.com",
            false,
        );
        assert_eq!(all(&headers), ["for=10.0.0.7;proto=http;host=shop.example.com"]);
    }

    #[test]
    fn a_trusted_peers_forwarded_is_kept_and_ours_appended() {
        let mut headers = mk_headers(&["for=203.0.113.9;proto=https"]);
        set_forwarded_header(
            &mut headers,
            "10.0.0.7".parse().unwrap(),
            "https",
            "shop.example.com",
            true,
        );
        assert_eq!(
            all(&headers),
            [
                "for=203.0.113.9;proto=https",
                "for=10.0.0.7;proto=https;host=shop.example.com"
            ]
        );
    }

    #[test]
    fn ipv6_nodes_are_bracketed_and_quoted_and_hosts_with_ports_quoted() {
        assert_eq!(
            element_text("2001:db8::1".parse().unwrap(), "http", "shop.example.com:8080"),
            "for=\"[2001:db8::1]\";proto=http;host=\"shop.example.com:8080\""
        );
        assert_eq!(
            element_text("::1".parse().unwrap(), "https", "[::1]:8443"),
            "for=\"[::1]\";proto=https;host=\"[::1]:8443\""
        );
        assert_eq!(
            element_text("10.0.0.7".parse().unwrap(), "http", ""),
            "for=10.0.0.7;proto=http"
        );
    }
}
