use proptest::prelude::*;

use super::*;

/// The fields the pod sees after `replace_forwarded`, by name, repeated values joined.
fn seen(client: &[(&str, &str)], tls: bool, original_uri: Option<&str>) -> (Vec<(String, String)>, HeaderValue) {
    let host = HeaderValue::from_static("Shop.example.com:8080");
    let request = ReplaceContext {
        peer: "::ffff:10.0.0.7".parse().unwrap(),
        via: None,
        tls,
        host: &host,
        original_uri,
        keys: None,
    };
    seen_with(client, &request)
}

fn seen_with(client: &[(&str, &str)], request: &ReplaceContext<'_>) -> (Vec<(String, String)>, HeaderValue) {
    let mut headers = HeaderMap::new();
    for (name, value) in client {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let mut added = AddedFields::default();
    let id = replace_forwarded(&mut headers, request, &mut added);
    added.append_to(&mut headers);
    let mut fields: Vec<(String, String)> = headers
        .keys()
        .map(|name| {
            let values: Vec<&str> = headers.get_all(name).iter().map(|v| v.to_str().unwrap()).collect();
            (name.to_string(), values.join(", "))
        })
        .collect();
    fields.sort();
    (fields, id)
}

fn mk_keys(pass_forwarded: bool, full: bool, original_for: &str) -> ForwardingKeys {
    let spec = crate::spec::NginxForwarding {
        real_ip: None,
        pass_forwarded,
        full_forwarded_for: full,
        original_for: original_for.to_string(),
    };
    ForwardingKeys::new(&spec).unwrap()
}

/// A request from 10.0.0.1 whose realip rule found 203.0.113.9, under `keys`.
fn keyed<'a>(keys: &'a ForwardingKeys, host: &'a HeaderValue, tls: bool) -> ReplaceContext<'a> {
    ReplaceContext {
        peer: "203.0.113.9".parse().unwrap(),
        via: Some("10.0.0.1".parse().unwrap()),
        tls,
        host,
        original_uri: None,
        keys: Some(keys),
    }
}

#[test]
fn use_forwarded_headers_passes_the_callers_proto_and_port_and_the_real_ip_is_the_callers() {
    let keys = mk_keys(true, false, "x-forwarded-for");
    let host = HeaderValue::from_static("shop.example.com");
    let client = [
        ("x-forwarded-for", "203.0.113.9, 10.0.0.2"),
        ("x-forwarded-proto", "https"),
        ("x-forwarded-port", "8443"),
    ];
    let (fields, _) = seen_with(&client, &keyed(&keys, &host, false));
    assert_eq!(field(&fields, "x-real-ip"), Some("203.0.113.9"));
    assert_eq!(field(&fields, "x-forwarded-for"), Some("203.0.113.9"));
    for name in ["x-forwarded-proto", "x-forwarded-scheme", "x-scheme"] {
        assert_eq!(field(&fields, name), Some("https"), "{name}");
    }
    assert_eq!(field(&fields, "x-forwarded-port"), Some("8443"));
    assert_eq!(
        field(&fields, "x-original-forwarded-for"),
        Some("203.0.113.9, 10.0.0.2")
    );
    // Without the key, the connection's scheme and port stand.
    let keys = mk_keys(false, false, "x-forwarded-for");
    let (fields, _) = seen_with(&client, &keyed(&keys, &host, false));
    assert_eq!(field(&fields, "x-forwarded-proto"), Some("http"));
    assert_eq!(field(&fields, "x-forwarded-port"), Some("80"));
    // An empty value is sent as nginx sends an empty `proxy_set_header`: not at all.
    let keys = mk_keys(true, false, "x-forwarded-for");
    let (fields, _) = seen_with(&[("x-forwarded-proto", "")], &keyed(&keys, &host, false));
    assert_eq!(field(&fields, "x-forwarded-proto"), None);
}

#[test]
fn compute_full_forwarded_for_appends_the_connections_peer_to_the_callers_chain() {
    let keys = mk_keys(true, true, "x-forwarded-for");
    let host = HeaderValue::from_static("shop.example.com");
    let client = [("x-forwarded-for", "6.6.6.6"), ("x-forwarded-for", "203.0.113.9")];
    let (fields, _) = seen_with(&client, &keyed(&keys, &host, true));
    assert_eq!(
        field(&fields, "x-forwarded-for"),
        Some("6.6.6.6, 203.0.113.9, 10.0.0.1")
    );
    assert_eq!(field(&fields, "x-real-ip"), Some("203.0.113.9"));
    let (fields, _) = seen_with(&[], &keyed(&keys, &host, true));
    assert_eq!(field(&fields, "x-forwarded-for"), Some("10.0.0.1"));
}

#[test]
fn forwarded_for_header_names_the_field_x_original_forwarded_for_copies() {
    let keys = mk_keys(false, false, "x-client-ip");
    let host = HeaderValue::from_static("shop.example.com");
    let client = [("x-forwarded-for", "6.6.6.6"), ("x-client-ip", "203.0.113.9")];
    let (fields, _) = seen_with(&client, &keyed(&keys, &host, false));
    assert_eq!(field(&fields, "x-original-forwarded-for"), Some("203.0.113.9"));
    // The caller's own field still reaches the pod: no `proxy_set_header` names it.
    assert_eq!(field(&fields, "x-client-ip"), Some("203.0.113.9"));
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[test]
fn a_plain_request_gets_the_templates_fields_and_no_forwarded() {
    let (fields, id) = seen(&[("accept", "*/*")], false, None);
    assert_eq!(id.len(), 32);
    assert!(
        id.as_bytes()
            .iter()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let expected = [
        ("accept", "*/*"),
        ("x-forwarded-for", "10.0.0.7"),
        ("x-forwarded-host", "Shop.example.com:8080"),
        ("x-forwarded-port", "80"),
        ("x-forwarded-proto", "http"),
        ("x-forwarded-scheme", "http"),
        ("x-real-ip", "10.0.0.7"),
        ("x-request-id", id.to_str().unwrap()),
        ("x-scheme", "http"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    assert_eq!(fields, expected);
}

#[test]
fn the_callers_forwarding_fields_are_replaced_and_kept_as_the_original_ones() {
    let client = [
        ("x-forwarded-for", "1.1.1.1"),
        ("x-forwarded-for", "2.2.2.2"),
        ("x-forwarded-host", "outside.example"),
        ("x-forwarded-proto", "https"),
        ("x-forwarded-port", "8443"),
        ("x-real-ip", "3.3.3.3"),
        ("x-scheme", "https"),
        ("x-original-forwarded-for", "forged"),
        ("proxy", "http://evil:3128"),
        ("forwarded", "for=4.4.4.4"),
        ("x-request-id", "caller-id"),
    ];
    let (fields, id) = seen(&client, true, None);
    assert_eq!(id, "caller-id");
    assert_eq!(field(&fields, "x-forwarded-for"), Some("10.0.0.7"));
    assert_eq!(field(&fields, "x-original-forwarded-for"), Some("1.1.1.1, 2.2.2.2"));
    assert_eq!(field(&fields, "x-original-forwarded-host"), Some("outside.example"));
    assert_eq!(field(&fields, "x-forwarded-proto"), Some("https"));
    assert_eq!(field(&fields, "x-forwarded-port"), Some("443"));
    assert_eq!(field(&fields, "x-real-ip"), Some("10.0.0.7"));
    assert_eq!(field(&fields, "x-scheme"), Some("https"));
    assert_eq!(field(&fields, "x-request-id"), Some("caller-id"));
    assert_eq!(field(&fields, "proxy"), None);
    // nginx does not touch `Forwarded`: the caller's passes as it came.
    assert_eq!(field(&fields, "forwarded"), Some("for=4.4.4.4"));
}

#[test]
fn an_empty_request_id_is_replaced_by_a_new_one() {
    let (fields, id) = seen(&[("x-request-id", "")], false, None);
    assert_eq!(id.len(), 32);
    assert_eq!(field(&fields, "x-request-id"), id.to_str().ok());
}

#[test]
fn the_original_uri_is_sent_only_when_asked_and_replaces_the_callers() {
    let (fields, _) = seen(&[("x-original-uri", "/forged")], false, None);
    assert_eq!(field(&fields, "x-original-uri"), Some("/forged"));
    let (fields, _) = seen(&[("x-original-uri", "/forged")], false, Some("/a//b?x=1"));
    assert_eq!(field(&fields, "x-original-uri"), Some("/a//b?x=1"));
}

proptest! {
    #[test]
    fn the_pod_sees_ours_whatever_the_client_sent_in_a_replaced_field(
        values in prop::collection::vec("[a-zA-Z0-9 ,.:=-]{0,20}", 11),
    ) {
        let (baseline, _) = seen(&[], false, None);
        let names = REPLACED.map(HeaderName::as_str);
        let client: Vec<(&str, &str)> = names.iter().copied().zip(values.iter().map(String::as_str)).collect();
        let (fields, _) = seen(&client, false, None);
        // The request id is the client's to choose, and the original fields carry the client's
        // X-Forwarded-For/-Host by design; every other replaced field is ours alone.
        let own = ["x-request-id", "x-original-forwarded-for", "x-original-forwarded-host"];
        for name in names.iter().filter(|name| !own.contains(name)) {
            prop_assert_eq!(field(&fields, name), field(&baseline, name), "{}", name);
        }
    }
}
