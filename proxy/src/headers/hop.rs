//! Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and never cross the proxy.

use http::{HeaderMap, HeaderValue, header};

const FIXED: [header::HeaderName; 5] = [
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::TRAILER,
    header::TE,
];

/// Removes hop-by-hop headers: those named by `Connection`, the fixed list, and `Proxy-*`.
/// `TE: trailers` survives: HTTP/2 allows it and gRPC servers expect it.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    // Most messages carry none: one look at each name instead of a lookup per listed name.
    // `Connection` is in FIXED, so a message naming extra hop-by-hop headers never skips.
    if !headers.keys().any(is_hop_by_hop) {
        return;
    }
    let keep_te_trailers = headers
        .get(header::TE)
        .is_some_and(|te| te.as_bytes().eq_ignore_ascii_case(b"trailers"));
    let named: Vec<header::HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| header::HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in &FIXED {
        headers.remove(name);
    }
    headers.remove("keep-alive");
    if headers.keys().any(|name| name.as_str().starts_with("proxy-")) {
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

fn is_hop_by_hop(name: &header::HeaderName) -> bool {
    FIXED.contains(name) || name == "keep-alive" || name.as_str().starts_with("proxy-")
}

/// The protocol an HTTP/1.1 request asks to switch to (`Connection: upgrade` + `Upgrade: X`).
pub fn upgrade_protocol(headers: &HeaderMap) -> Option<HeaderValue> {
    let wants_upgrade = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"));
    if wants_upgrade {
        headers.get(header::UPGRADE).cloned()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

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
