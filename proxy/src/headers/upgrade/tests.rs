use http::HeaderName;

use super::*;

fn mk_headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    headers
}

fn upgrade(pairs: &[(&str, &str)], version: Version, allowed: &[&str]) -> Option<String> {
    forwarded_upgrade(&mk_headers(pairs), version, &AllowedUpgrades::new(allowed))
        .map(|value| value.to_str().unwrap().to_string())
}

#[test]
fn a_websocket_upgrade_is_forwarded_as_asked() {
    let asked = [("connection", "keep-alive, Upgrade"), ("upgrade", "WebSocket")];
    assert_eq!(upgrade(&asked, Version::HTTP_11, &[]).as_deref(), Some("WebSocket"));
}

#[test]
fn h2c_and_unknown_protocols_are_not_forwarded() {
    for protocol in ["h2c", "HTTP/2.0", "TLS/1.2", "foo"] {
        let asked = [("connection", "Upgrade, HTTP2-Settings"), ("upgrade", protocol)];
        assert_eq!(upgrade(&asked, Version::HTTP_11, &[]), None, "{protocol}");
    }
}

#[test]
fn only_the_allowed_protocols_of_a_list_are_kept() {
    let asked = [
        ("connection", "upgrade"),
        ("upgrade", "h2c, websocket"),
        ("upgrade", "foo/2"),
    ];
    assert_eq!(upgrade(&asked, Version::HTTP_11, &[]).as_deref(), Some("websocket"));
    assert_eq!(
        upgrade(&asked, Version::HTTP_11, &["FOO"]).as_deref(),
        Some("websocket, foo/2")
    );
}

#[test]
fn an_operator_may_allow_another_protocol_by_name() {
    let asked = [("connection", "upgrade"), ("upgrade", "spdy/3.1")];
    assert_eq!(upgrade(&asked, Version::HTTP_11, &[]), None);
    assert_eq!(
        upgrade(&asked, Version::HTTP_11, &["spdy"]).as_deref(),
        Some("spdy/3.1")
    );
}

#[test]
fn http_1_0_and_http_2_requests_never_upgrade() {
    let asked = [("connection", "upgrade"), ("upgrade", "websocket")];
    assert_eq!(upgrade(&asked, Version::HTTP_10, &[]), None);
    assert_eq!(upgrade(&asked, Version::HTTP_2, &[]), None);
}

#[test]
fn upgrade_without_connection_upgrade_is_no_upgrade() {
    assert_eq!(upgrade(&[("upgrade", "websocket")], Version::HTTP_11, &[]), None);
}
