//! Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and never cross the proxy.

use http::{HeaderMap, HeaderValue, header};

const FIXED: [header::HeaderName; 5] = [
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::TRAILER,
    header::TE,
];

/// Which hop-by-hop names one pass over a message's names found.
#[derive(Default)]
struct Found {
    /// Bit `i` set: `FIXED[i]` is present.
    fixed: u8,
    keep_alive: bool,
    proxy: bool,
}

/// Removes hop-by-hop headers: those named by `Connection`, the fixed list, and `Proxy-*`.
/// `TE: trailers` survives: HTTP/2 allows it and gRPC servers expect it.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    // One look at each name, then removals only for what is there: most requests carry none,
    // and most responses only `Connection: keep-alive` (plus, at times, `Keep-Alive`).
    let found = scan(headers);
    if found.fixed == 0 && !found.keep_alive && !found.proxy {
        return;
    }
    // Looked up only when the scan saw a TE: a response (most of what gets here) has none.
    let keep_te_trailers = found.has(&header::TE)
        && headers
            .get(header::TE)
            .is_some_and(|te| te.as_bytes().eq_ignore_ascii_case(b"trailers"));
    // The usual options cost no lookup: `keep-alive` names a header removed below anyway, and
    // `close` rarely comes with a header of that name.
    let mut named: Vec<header::HeaderName> = Vec::new();
    let mut close = false;
    let tokens = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim);
    for token in tokens {
        if token.eq_ignore_ascii_case("close") {
            close = true;
        } else if !token.eq_ignore_ascii_case("keep-alive")
            && let Ok(name) = header::HeaderName::from_bytes(token.as_bytes())
        {
            named.push(name);
        }
    }
    for name in named {
        headers.remove(name);
    }
    if close {
        headers.remove("close");
    }
    for (i, name) in FIXED.iter().enumerate() {
        if found.fixed & (1 << i) != 0 {
            headers.remove(name);
        }
    }
    if found.keep_alive {
        headers.remove("keep-alive");
    }
    if found.proxy {
        let proxied: Vec<_> = headers
            .keys()
            .filter(|name| name.as_str().starts_with("proxy-"))
            .cloned()
            .collect();
        for name in proxied {
            headers.remove(name);
        }
    }
    if keep_te_trailers {
        headers.insert(header::TE, HeaderValue::from_static("trailers"));
    }
}

fn scan(headers: &HeaderMap) -> Found {
    let mut found = Found::default();
    for name in headers.keys() {
        if let Some(i) = FIXED.iter().position(|fixed| fixed == name) {
            found.fixed |= 1 << i;
        } else if name == "keep-alive" {
            found.keep_alive = true;
        } else if name.as_str().starts_with("proxy-") {
            found.proxy = true;
        }
    }
    found
}

impl Found {
    /// Whether the scan saw `name`, one of `FIXED`.
    fn has(&self, name: &header::HeaderName) -> bool {
        FIXED
            .iter()
            .position(|fixed| fixed == name)
            .is_some_and(|i| self.fixed & (1 << i) != 0)
    }
}

/// Names a route may not set on requests: the connection's own (hop-by-hop) fields, the
/// framing fields, and `Host`. Set by a route, they would go out beside the proxy's own and a pod
/// could read the message another way than shunt wrote it.
pub fn is_connection_or_framing_field(name: &header::HeaderName) -> bool {
    FIXED.contains(name)
        || *name == header::CONTENT_LENGTH
        || *name == header::HOST
        || name == "keep-alive"
        || name.as_str().starts_with("proxy-")
}

/// Whether a `Connection` header lists `option`.
pub(super) fn connection_has(headers: &HeaderMap, option: &str) -> bool {
    super::has_field(headers, &header::CONNECTION)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case(option))
}

/// The protocol an HTTP/1.1 request asks to switch to (`Connection: upgrade` + `Upgrade: X`).
pub fn upgrade_protocol(headers: &HeaderMap) -> Option<HeaderValue> {
    if connection_has(headers, "upgrade") {
        headers.get(header::UPGRADE).cloned()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The definition the strip must follow, written plainly.
    fn is_hop_by_hop(name: &header::HeaderName) -> bool {
        FIXED.contains(name) || name == "keep-alive" || name.as_str().starts_with("proxy-")
    }

    fn mk_headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    #[test]
    fn connection_named_fixed_and_proxy_headers_are_removed() {
        let mut headers = mk_headers(&[
            ("connection", "keep-alive, X-Secret"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("trailer", "x-checksum"),
            ("te", "gzip"),
            ("proxy-authorization", "basic x"),
            ("proxy-connection", "keep-alive"),
            ("x-kept", "yes"),
            ("host", "shop.example.com"),
        ]);
        strip_hop_by_hop(&mut headers);
        let mut left: Vec<_> = headers.keys().map(|k| k.as_str()).collect();
        left.sort();
        assert_eq!(left, ["host", "x-kept"]);
    }

    #[test]
    fn a_lone_keep_alive_or_proxy_header_is_removed() {
        for name in ["keep-alive", "proxy-authorization", "te", "trailer"] {
            let mut headers = mk_headers(&[(name, "x"), ("x-kept", "yes")]);
            strip_hop_by_hop(&mut headers);
            assert_eq!(
                headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
                ["x-kept"],
                "{name}"
            );
        }
    }

    proptest! {
        #[test]
        fn stripping_leaves_every_end_to_end_header_and_no_hop_by_hop_one(
            names in proptest::collection::vec(
                prop_oneof![
                    Just("connection"), Just("keep-alive"), Just("te"), Just("trailer"), Just("upgrade"),
                    Just("transfer-encoding"), Just("proxy-x"), Just("host"), Just("x-a"), Just("cookie"),
                ],
                0..8,
            )
        ) {
            let pairs: Vec<(&str, &str)> = names.iter().map(|name| (*name, "v")).collect();
            let mut headers = mk_headers(&pairs);
            strip_hop_by_hop(&mut headers);
            for name in &names {
                let hop = is_hop_by_hop(&header::HeaderName::from_static(name));
                prop_assert_eq!(headers.contains_key(*name), !hop, "{}", name);
            }
        }
    }

    #[test]
    fn a_usual_keep_alive_response_loses_only_its_connection_headers() {
        let mut headers = mk_headers(&[
            ("connection", "Keep-Alive"),
            ("keep-alive", "timeout=5"),
            ("content-length", "19"),
            ("x-kept", "yes"),
        ]);
        strip_hop_by_hop(&mut headers);
        let mut left: Vec<_> = headers.keys().map(|k| k.as_str()).collect();
        left.sort();
        assert_eq!(left, ["content-length", "x-kept"]);
    }

    #[test]
    fn connection_close_removes_a_header_named_close_too() {
        let mut headers = mk_headers(&[("connection", "close"), ("close", "1"), ("x-kept", "yes")]);
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["x-kept"]);
    }

    proptest! {
        #[test]
        fn every_header_the_connection_options_name_is_removed_and_no_other(
            options in proptest::collection::vec(
                prop_oneof![Just("keep-alive"), Just("Close"), Just("x-a"), Just("X-B"), Just("upgrade"), Just("")],
                0..5,
            ),
            present in proptest::collection::vec(
                prop_oneof![Just("keep-alive"), Just("close"), Just("x-a"), Just("x-b"), Just("x-c"), Just("host")],
                0..6,
            ),
        ) {
            let connection = options.join(", ");
            let mut pairs: Vec<(&str, &str)> = present.iter().map(|name| (*name, "v")).collect();
            pairs.push(("connection", &connection));
            let mut headers = mk_headers(&pairs);
            strip_hop_by_hop(&mut headers);
            prop_assert!(!headers.contains_key("connection"));
            for name in &present {
                let named = options.iter().any(|option| option.eq_ignore_ascii_case(name));
                let hop = named || is_hop_by_hop(&header::HeaderName::from_static(name));
                prop_assert_eq!(headers.contains_key(*name), !hop, "{} with connection: {}", name, connection);
            }
        }
    }

    #[test]
    fn te_trailers_is_kept_for_grpc() {
        let mut headers = mk_headers(&[("te", "trailers")]);
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.get("te").unwrap(), "trailers");
    }

    #[test]
    fn upgrade_needs_both_headers() {
        assert_eq!(
            upgrade_protocol(&mk_headers(&[("connection", "Upgrade"), ("upgrade", "websocket")])).unwrap(),
            "websocket"
        );
        assert_eq!(
            upgrade_protocol(&mk_headers(&[
                ("connection", "keep-alive, upgrade"),
                ("upgrade", "h2c")
            ]))
            .unwrap(),
            "h2c"
        );
        assert!(upgrade_protocol(&mk_headers(&[("upgrade", "websocket")])).is_none());
        assert!(upgrade_protocol(&mk_headers(&[("connection", "upgrade")])).is_none());
    }
}
