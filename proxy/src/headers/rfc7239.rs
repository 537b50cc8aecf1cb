//! The `Forwarded` header (RFC 7239): what shunt adds for its own hop.
//!
//! From an untrusted peer the caller's `Forwarded` is dropped, like its X-Forwarded-For, and
//! shunt's element is the only one; from a trusted proxy the existing elements stay and shunt's
//! is appended. Shunt's element says what X-Forwarded-For's last entry and this hop's proto
//! and host say: `for=<peer>;proto=<scheme>;host=<host>`.

use std::net::IpAddr;

use super::ip_text;

/// One forwarded-element. IPv6 nodes are bracketed and quoted (RFC 7239 §6); a host that is
/// not a token (it has a `:port`, say) is a quoted-string.
pub(super) fn push_element(out: &mut Vec<u8>, peer: IpAddr, scheme: &str, host: &str) {
    match peer {
        IpAddr::V4(_) => {
            out.extend_from_slice(b"for=");
            ip_text::push_ip(out, peer);
        }
        IpAddr::V6(_) => {
            out.extend_from_slice(b"for=\"[");
            ip_text::push_ip(out, peer);
            out.extend_from_slice(b"]\"");
        }
    }
    out.extend_from_slice(b";proto=");
    out.extend_from_slice(scheme.as_bytes());
    if !host.is_empty() {
        out.extend_from_slice(b";host=");
        push_value(out, host);
    }
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
    TCHAR[b as usize]
}

/// `tchar` by byte: a table, since every request's host is checked byte by byte and a search of
/// the punctuation list per byte cost a `memchr` call each.
static TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = byte.is_ascii_alphanumeric()
            || matches!(byte, b'!' | b'#'..=b'\'' | b'*' | b'+' | b'-' | b'.' | b'^'..=b'`' | b'|' | b'~');
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn element_text(peer: IpAddr, scheme: &str, host: &str) -> String {
        let mut out = Vec::new();
        push_element(&mut out, peer, scheme, host);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_tchar_table_is_rfc_9110s_list() {
        for b in 0..=u8::MAX {
            let listed = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            assert_eq!(is_tchar(b), listed, "byte {b:#04x}");
        }
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
