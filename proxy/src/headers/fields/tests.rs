use http::{HeaderValue, header};
use proptest::prelude::*;

use super::*;

fn mk_headers(names: &[&str]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for name in names {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_static("v"),
        );
    }
    headers
}

#[test]
fn names_with_underscores_are_dropped_and_counted_once_each() {
    let mut headers = mk_headers(&[
        "content-length",
        "content_length",
        "transfer_encoding",
        "x-ok",
        "x_a",
        "x_a",
    ]);
    assert_eq!(drop_underscored(&mut headers), 3);
    let mut left: Vec<_> = headers.keys().map(HeaderName::as_str).collect();
    left.sort();
    assert_eq!(left, ["content-length", "x-ok"]);
}

#[test]
fn a_request_without_underscores_is_left_as_it_is() {
    let mut headers = mk_headers(&["host", "accept", "x-request-id"]);
    assert_eq!(drop_underscored(&mut headers), 0);
    assert_eq!(headers.len(), 3);
    assert!(headers.contains_key(header::HOST));
}

proptest! {
    #[test]
    fn any_name_the_parser_takes_is_a_token_and_is_dropped_exactly_when_it_holds_an_underscore(
        name in proptest::collection::vec(any::<u8>(), 1..12)
    ) {
        // The names `http` takes are the names httparse takes: the tokens (the parser lowercases).
        let parsed = HeaderName::from_bytes(&name);
        prop_assert_eq!(parsed.is_ok(), is_token(&name), "{:?}", name);
        if let Ok(parsed) = parsed {
            let mut headers = HeaderMap::new();
            headers.insert(parsed.clone(), HeaderValue::from_static("v"));
            headers.insert(header::HOST, HeaderValue::from_static("h"));
            let dropped = drop_underscored(&mut headers);
            prop_assert_eq!(dropped == 1, name.contains(&b'_'));
            prop_assert_eq!(headers.contains_key(&parsed), !name.contains(&b'_'));
            prop_assert!(headers.contains_key(header::HOST));
        }
    }
}

proptest! {
    #[test]
    fn both_http1_paths_parse_a_field_name_exactly_when_it_is_a_token(
        name in proptest::collection::vec(any::<u8>(), 1..12)
    ) {
        // Our loop and hyper's both read heads with httparse; what it refuses gets hyper's 400.
        let mut head = b"GET / HTTP/1.1\r\nHost: h\r\n".to_vec();
        head.extend_from_slice(&name);
        head.extend_from_slice(b": v\r\n\r\n");
        let mut fields = [httparse::EMPTY_HEADER; 4];
        let parsed = httparse::Request::new(&mut fields).parse(&head);
        // A CR or LF ends the line and a colon the name: another head, not this name.
        prop_assume!(!name.iter().any(|&b| b == b'\r' || b == b'\n' || b == b':'));
        prop_assert_eq!(
            matches!(parsed, Ok(httparse::Status::Complete(_))),
            is_token(&name),
            "{:?}", String::from_utf8_lossy(&name)
        );
    }
}
