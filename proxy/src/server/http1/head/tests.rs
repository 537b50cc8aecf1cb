//! Which heads our loop takes, what it makes of them, and that everything else goes to hyper
//! untouched (from the first byte of the buffer).

use proptest::prelude::*;

use super::*;

/// Large enough for every head here; the bound itself has its own tests.
const MAX_HEAD: usize = 8192;

fn mk_buf(bytes: &[u8]) -> BytesMut {
    BytesMut::from(bytes)
}

/// The request a head must give; panics with what came instead.
fn mk_request(bytes: &[u8]) -> (Request<ClientBody>, usize, bool) {
    match parse(&mk_buf(bytes), MAX_HEAD) {
        Parsed::Request {
            request,
            consumed,
            close,
        } => (request, consumed, close),
        other => panic!(
            "expected a request from {:?}, got {other:?}",
            String::from_utf8_lossy(bytes)
        ),
    }
}

fn body_of(request: Request<ClientBody>) -> Option<Bytes> {
    match request.into_body() {
        ClientBody::Read(body) => body,
        ClientBody::Hyper(_) => panic!("a parsed head carries the bytes it read, not hyper's body"),
    }
}

fn is_hand_over(bytes: &[u8], max_head: usize) -> bool {
    matches!(parse(&mk_buf(bytes), max_head), Parsed::HandOver)
}

#[test]
fn a_plain_get_gives_its_method_target_version_and_fields_and_consumes_its_head() {
    let text = b"GET /a/b?c=d HTTP/1.1\r\nHost: app.example.com\r\nX-Id: one two\r\nX-Id: 3\r\n\r\n";
    let (request, consumed, close) = mk_request(text);
    assert_eq!(consumed, text.len());
    assert!(!close);
    assert_eq!(request.method(), Method::GET);
    assert_eq!(request.uri(), "/a/b?c=d");
    assert_eq!(request.version(), Version::HTTP_11);
    assert_eq!(request.headers()[header::HOST], "app.example.com");
    let ids: Vec<_> = request.headers().get_all("x-id").iter().collect();
    assert_eq!(ids, ["one two", "3"]);
    assert_eq!(request.headers().len(), 3);
    assert_eq!(body_of(request), None);
}

#[test]
fn connection_close_in_any_case_or_list_position_asks_to_close() {
    for value in ["close", "Close", "keep-alive, Close", "foo ,  close  , bar"] {
        let text = format!("GET / HTTP/1.1\r\nHost: a\r\nConnection: {value}\r\n\r\n");
        let (request, _, close) = mk_request(text.as_bytes());
        assert!(close, "Connection: {value}");
        // The field itself still reaches the proxy, which strips hop-by-hop fields.
        assert_eq!(request.headers()[header::CONNECTION], value);
    }
    for value in ["keep-alive", "closed", "x-close"] {
        let text = format!("GET / HTTP/1.1\r\nHost: a\r\nConnection: {value}\r\n\r\n");
        assert!(!mk_request(text.as_bytes()).2, "Connection: {value}");
    }
}

#[test]
fn a_body_read_with_its_head_is_the_requests_body_and_the_next_request_is_left() {
    let head = b"POST /submit HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
    let next = b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n";
    let buf = [&head[..], b"hello", next].concat();
    let (request, consumed, _) = mk_request(&buf);
    assert_eq!(consumed, head.len() + 5);
    assert_eq!(&buf[consumed..], next);
    assert_eq!(request.method(), Method::POST);
    assert_eq!(request.headers()[header::CONTENT_LENGTH], "5");
    assert_eq!(body_of(request), Some(Bytes::from_static(b"hello")));
    // The leftover parses on its own: what the loop does next.
    let (request, consumed, _) = mk_request(&buf[head.len() + 5..]);
    assert_eq!((request.uri().path(), consumed), ("/next", next.len()));
}

#[test]
fn content_length_zero_is_a_request_without_a_body() {
    let text = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n";
    let (request, consumed, _) = mk_request(text);
    assert_eq!(consumed, text.len());
    assert_eq!(body_of(request), None);
}

#[test]
fn a_body_not_all_read_is_handed_over_for_hyper_to_stream() {
    let text = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello";
    assert!(is_hand_over(text, MAX_HEAD));
}

#[test]
fn a_body_over_the_read_limit_is_handed_over_even_when_all_there() {
    let over = MAX_READ_BODY + 1;
    let mut buf = format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {over}\r\n\r\n").into_bytes();
    buf.resize(buf.len() + over, b'x');
    assert!(is_hand_over(&buf, MAX_HEAD));
    // At the limit it is still ours.
    let mut buf = format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {MAX_READ_BODY}\r\n\r\n").into_bytes();
    buf.resize(buf.len() + MAX_READ_BODY, b'x');
    let (request, consumed, _) = mk_request(&buf);
    assert_eq!(consumed, buf.len());
    assert_eq!(body_of(request).map(|b| b.len()), Some(MAX_READ_BODY));
}

#[test]
fn two_content_length_fields_or_an_unparsable_one_are_handed_over() {
    for fields in [
        "Content-Length: 1\r\nContent-Length: 1\r\n",
        "Content-Length: 1\r\nContent-Length: 2\r\n",
        "Content-Length: 1, 1\r\n",
        "Content-Length: +1\r\n",
        "Content-Length: \r\n",
        "Content-Length: 99999999999999999999999\r\n",
    ] {
        let text = format!("POST / HTTP/1.1\r\nHost: a\r\n{fields}\r\nxx");
        assert!(is_hand_over(text.as_bytes(), MAX_HEAD), "{fields:?}");
    }
}

#[test]
fn transfer_encoding_upgrade_expect_and_te_are_handed_over_in_any_case() {
    for field in [
        "Transfer-Encoding: chunked",
        "transfer-encoding: identity",
        "Upgrade: websocket",
        "Expect: 100-continue",
        "TE: trailers",
        "te: trailers",
    ] {
        let text = format!("POST / HTTP/1.1\r\nHost: a\r\n{field}\r\n\r\n");
        assert!(is_hand_over(text.as_bytes(), MAX_HEAD), "{field}");
    }
}

#[test]
fn connect_and_http10_are_handed_over() {
    assert!(is_hand_over(
        b"CONNECT app.example.com:443 HTTP/1.1\r\nHost: app.example.com:443\r\n\r\n",
        MAX_HEAD
    ));
    assert!(is_hand_over(b"GET / HTTP/1.0\r\nHost: a\r\n\r\n", MAX_HEAD));
    assert!(is_hand_over(b"GET / HTTP/1.0\r\n\r\n", MAX_HEAD));
}

#[test]
fn a_partial_head_asks_for_more_until_it_reaches_the_bound() {
    for partial in [&b""[..], b"G", b"GET / HTTP/1.1\r\n", b"GET / HTTP/1.1\r\nHost: a\r\n"] {
        assert!(
            matches!(parse(&mk_buf(partial), MAX_HEAD), Parsed::Partial),
            "{:?}",
            String::from_utf8_lossy(partial)
        );
    }
    let partial = format!("GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}", "a".repeat(100));
    assert!(matches!(
        parse(&mk_buf(partial.as_bytes()), partial.len() + 1),
        Parsed::Partial
    ));
    // A client still sending a head of max_head bytes will not fit: hyper answers 431.
    assert!(is_hand_over(partial.as_bytes(), partial.len()));
    assert!(is_hand_over(partial.as_bytes(), partial.len() - 1));
}

#[test]
fn a_complete_head_longer_than_the_bound_is_handed_over() {
    let text = format!("GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n", "a".repeat(100));
    assert!(is_hand_over(text.as_bytes(), text.len() - 1));
    let (_, consumed, _) = match parse(&mk_buf(text.as_bytes()), text.len()) {
        Parsed::Request {
            request,
            consumed,
            close,
        } => (request, consumed, close),
        other => panic!("a head of exactly max_head bytes is ours, got {other:?}"),
    };
    assert_eq!(consumed, text.len());
}

#[test]
fn more_fields_than_hyper_allows_are_handed_over() {
    let fields = |n: usize| -> String { (0..n).map(|i| format!("x-{i}: v\r\n")).collect() };
    let at_limit = format!("GET / HTTP/1.1\r\n{}\r\n", fields(MAX_FIELDS));
    assert_eq!(mk_request(at_limit.as_bytes()).0.headers().len(), MAX_FIELDS);
    let over = format!("GET / HTTP/1.1\r\n{}\r\n", fields(MAX_FIELDS + 1));
    assert!(is_hand_over(over.as_bytes(), MAX_HEAD));
}

#[test]
fn garbage_and_malformed_heads_are_handed_over_for_hyper_to_answer_400() {
    for bad in [
        &b"\x00\x01\x02garbage\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nX A: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nX-A : b\r\n\r\n",
        b"GET / HTTP/1.1\r\nX-A: one\r\n two\r\n\r\n",
        b"GET / HTTP/1.1\r\nX-A: b\x00c\r\n\r\n",
        b"GET /a b HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.2\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ] {
        assert!(is_hand_over(bad, MAX_HEAD), "{:?}", String::from_utf8_lossy(bad));
    }
}

// === properties ===

/// Field names the parser treats specially; the generated plain fields avoid them.
const SPECIAL: [&str; 6] = [
    "content-length",
    "transfer-encoding",
    "upgrade",
    "expect",
    "te",
    "connection",
];

fn plain_fields() -> impl Strategy<Value = Vec<(String, String)>> {
    let name = "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,16}".prop_filter("a field the parser acts on", |name| {
        !SPECIAL.contains(&name.to_ascii_lowercase().as_str())
    });
    proptest::collection::vec((name, "[!-~]([ -~]{0,20}[!-~])?"), 0..10)
}

/// How a `HeaderMap` built from `fields` iterates: each name's values together, at its first
/// place.
fn mk_grouped(fields: &[(String, String)]) -> Vec<(String, String)> {
    let mut names: Vec<String> = Vec::new();
    for (name, _) in fields {
        let name = name.to_ascii_lowercase();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
        .iter()
        .flat_map(|name| {
            fields
                .iter()
                .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
                .map(move |(_, value)| (name.clone(), value.clone()))
        })
        .collect()
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_and_a_request_consumes_only_what_was_read(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        max_head in 1usize..700,
    ) {
        if let Parsed::Request { consumed, .. } = parse(&mk_buf(&bytes), max_head) {
            prop_assert!(consumed <= bytes.len());
        }
    }

    #[test]
    fn arbitrary_fields_after_a_request_line_never_panic(fields in "[ -~\t\r\n]{0,300}", body in "[ -~]{0,40}") {
        let text = format!("POST / HTTP/1.1\r\n{fields}\r\n\r\n{body}");
        if let Parsed::Request { consumed, .. } = parse(&mk_buf(text.as_bytes()), MAX_HEAD) {
            prop_assert!(consumed <= text.len());
        }
    }

    #[test]
    fn a_valid_request_round_trips_and_every_cut_of_it_waits_or_hands_over(
        method in prop_oneof![Just("GET"), Just("HEAD"), Just("POST"), Just("PUT"), Just("DELETE"), Just("PATCH"), Just("OPTIONS")],
        path in "/[A-Za-z0-9._~!$&'()*+,;=:@/-]{0,30}(\\?[A-Za-z0-9=&/?-]{0,12})?",
        fields in plain_fields(),
        body in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
        length_at in any::<prop::sample::Index>(),
        rest in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let mut all_fields = fields.clone();
        if let Some(body) = &body {
            all_fields.insert(length_at.index(fields.len() + 1), ("Content-Length".to_string(), body.len().to_string()));
        }
        let mut head = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
        for (name, value) in &all_fields {
            head.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        head.extend_from_slice(b"\r\n");
        let body = body.unwrap_or_default();
        let wire = [&head[..], &body, &rest].concat();

        let Parsed::Request { request, consumed, close } = parse(&mk_buf(&wire), MAX_HEAD) else {
            return Err(TestCaseError::fail(format!("not a request: {:?}", String::from_utf8_lossy(&wire))));
        };
        prop_assert_eq!(consumed, head.len() + body.len());
        prop_assert!(!close);
        prop_assert_eq!(request.method().as_str(), method);
        prop_assert_eq!(request.uri().to_string(), path);
        let seen: Vec<(String, String)> = request
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.to_str().unwrap().to_string()))
            .collect();
        prop_assert_eq!(seen, mk_grouped(&all_fields));
        let expected_body = (!body.is_empty()).then(|| Bytes::from(body.clone()));
        prop_assert_eq!(body_of(request), expected_body);

        for cut in 0..head.len() {
            prop_assert!(
                matches!(parse(&mk_buf(&wire[..cut]), MAX_HEAD), Parsed::Partial),
                "cut at {} of the head {:?}", cut, String::from_utf8_lossy(&head)
            );
        }
        // The head is there but not the whole body: hyper streams it.
        for cut in head.len()..head.len() + body.len() {
            prop_assert!(matches!(parse(&mk_buf(&wire[..cut]), MAX_HEAD), Parsed::HandOver), "cut at {}", cut);
        }
    }
}
