//! The `Forwarded` header (RFC 7239): what shunt adds for its own hop.
//!
//! From an untrusted peer the caller's `Forwarded` is dropped, like its X-Forwarded-For, and
//! shunt's element is the only one; from a trusted proxy the existing elements stay and shunt's
//! is appended. Shunt's element says what X-Forwarded-For's last entry and this hop's proto
//! and host say: `for=<peer>;proto=<scheme>;host=<host>`.

use std::{fmt::Write as _, net::IpAddr};

use http::{HeaderMap, HeaderValue, header};

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
    if let Ok(value) = HeaderValue::from_str(&element(peer, scheme, host)) {
        headers.append(header::FORWARDED, value);
    }
}

/// One forwarded-element. IPv6 nodes are bracketed and quoted (RFC 7239 §6); a host that is
/// not a token (it has a `:port`, say) is a quoted-string.
fn element(peer: IpAddr, scheme: &str, host: &str) -> String {
    let mut out = String::with_capacity(host.len() + 64);
    match peer {
        IpAddr::V4(v4) => {
            let _ = write!(out, "for={v4}");
        }
        IpAddr::V6(v6) => {
            let _ = write!(out, "for=\"[{v6}]\"");
        }
    }
    let _ = write!(out, ";proto={scheme}");
    if !host.is_empty() {
        out.push_str(";host=");
        push_value(&mut out, host);
    }
    out
}

/// A token as is, anything else as a quoted-string (RFC 9110 §5.6.2, §5.6.4).
fn push_value(out: &mut String, value: &str) {
    if value.bytes().all(is_tchar) {
        out.push_str(value);
        return;
    }
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
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
            element("2001:db8::1".parse().unwrap(), "http", "shop.example.com:8080"),
            "for=\"[2001:db8::1]\";proto=http;host=\"shop.example.com:8080\""
        );
        assert_eq!(
            element("::1".parse().unwrap(), "https", "[::1]:8443"),
            "for=\"[::1]\";proto=https;host=\"[::1]:8443\""
        );
        assert_eq!(
            element("10.0.0.7".parse().unwrap(), "http", ""),
            "for=10.0.0.7;proto=http"
        );
    }
}
