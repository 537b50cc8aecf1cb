//! The response heads our loop writes: framing chosen as hyper chooses it, checked case by
//! case and then against hyper's own HTTP/1.1 server.

use std::{
    convert::Infallible,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response};
use http_body::{Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// The head as text and what `encode_head` returned.
fn mk_head(
    status: u16,
    fields: &[(&str, &str)],
    body: BodyShape,
    method: Method,
    close: bool,
) -> (String, Result<Written, InvalidLength>) {
    let mut headers = HeaderMap::new();
    for (name, value) in fields {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let mut out = Vec::new();
    let written = encode_head(
        &mut out,
        StatusCode::from_u16(status).unwrap(),
        &headers,
        body,
        &method,
        close,
    );
    (String::from_utf8(out).expect("a head is ASCII"), written)
}

/// The status line, and the fields in order, names as written.
fn split_head(head: &str) -> (&str, Vec<(&str, &str)>) {
    let head = head
        .strip_suffix("\r\n\r\n")
        .unwrap_or_else(|| panic!("a head ends with an empty line: {head:?}"));
    let mut lines = head.split("\r\n");
    let status = lines.next().expect("a status line");
    let fields = lines
        .map(|line| {
            line.split_once(": ")
                .unwrap_or_else(|| panic!("a field line: {line:?}"))
        })
        .collect();
    (status, fields)
}

/// The values of the fields named `name` (written lowercase), in order.
fn values<'a>(head: &'a str, name: &str) -> Vec<&'a str> {
    split_head(head)
        .1
        .into_iter()
        .filter(|(n, _)| *n == name)
        .map(|(_, value)| value)
        .collect()
}

fn written(framing: BodyFraming, close: bool) -> Result<Written, InvalidLength> {
    Ok(Written { framing, close })
}

#[test]
fn a_body_of_known_length_gets_its_content_length() {
    let (head, written_) = mk_head(200, &[("x-a", "1")], BodyShape::Exact(5), Method::GET, false);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\nx-a: 1\r\n"), "{head}");
    assert_eq!(values(&head, "content-length"), ["5"]);
    assert!(values(&head, "transfer-encoding").is_empty(), "{head}");
    assert!(values(&head, "connection").is_empty(), "{head}");
    assert_eq!(written_, written(BodyFraming::Length(5), false));
}

#[test]
fn a_body_of_unknown_length_is_chunked() {
    let (head, written_) = mk_head(200, &[], BodyShape::Unknown, Method::GET, false);
    assert_eq!(values(&head, "transfer-encoding"), ["chunked"]);
    assert!(values(&head, "content-length").is_empty(), "{head}");
    assert_eq!(written_, written(BodyFraming::Chunked, false));
}

#[test]
fn a_body_of_unknown_length_with_a_content_length_field_is_framed_by_it() {
    let (head, written_) = mk_head(200, &[("content-length", "7")], BodyShape::Unknown, Method::GET, false);
    assert_eq!(values(&head, "content-length"), ["7"]);
    assert!(values(&head, "transfer-encoding").is_empty(), "{head}");
    assert_eq!(written_, written(BodyFraming::Length(7), false));
}

#[test]
fn a_body_of_unknown_length_with_an_unparsable_content_length_is_an_error() {
    for bad in ["abc", "-1", "1, 1", "", "99999999999999999999999"] {
        let (_, written_) = mk_head(200, &[("content-length", bad)], BodyShape::Unknown, Method::GET, false);
        assert_eq!(written_, Err(InvalidLength), "{bad:?}");
    }
}

#[test]
fn an_empty_body_gets_content_length_zero_whatever_field_it_came_with() {
    for fields in [&[][..], &[("content-length", "0")], &[("content-length", "5")]] {
        let (head, written_) = mk_head(200, fields, BodyShape::Empty, Method::GET, false);
        assert_eq!(values(&head, "content-length"), ["0"], "{fields:?}");
        assert_eq!(written_, written(BodyFraming::Length(0), false));
    }
}

#[test]
fn a_head_answer_keeps_the_length_a_get_would_get_and_frames_nothing() {
    for body in [BodyShape::Empty, BodyShape::Exact(42), BodyShape::Unknown] {
        let (head, written_) = mk_head(200, &[("content-length", "42")], body, Method::HEAD, false);
        assert_eq!(values(&head, "content-length"), ["42"], "{body:?}");
        assert!(values(&head, "transfer-encoding").is_empty(), "{head}");
        assert_eq!(written_, written(BodyFraming::None, false), "{body:?}");
    }
    let (head, written_) = mk_head(200, &[], BodyShape::Exact(42), Method::HEAD, false);
    assert_eq!(values(&head, "content-length"), ["42"]);
    assert_eq!(written_, written(BodyFraming::None, false));
    // Nothing known: a HEAD answer states no length at all, as from hyper.
    for body in [BodyShape::Empty, BodyShape::Exact(0), BodyShape::Unknown] {
        let (head, written_) = mk_head(200, &[], body, Method::HEAD, false);
        assert!(values(&head, "content-length").is_empty(), "{body:?}: {head}");
        assert!(values(&head, "transfer-encoding").is_empty(), "{body:?}: {head}");
        assert_eq!(written_, written(BodyFraming::None, false));
    }
}

#[test]
fn no_content_and_not_modified_frame_nothing_and_pass_a_given_length_only_beside_a_body() {
    // hyper's rules: with an empty body the field goes; otherwise it passes as given, and
    // nothing of the body follows either way.
    for status in [204, 304] {
        for body in [BodyShape::Empty, BodyShape::Exact(3), BodyShape::Unknown] {
            for method in [Method::GET, Method::POST] {
                let (head, written_) = mk_head(status, &[("content-length", "3")], body, method.clone(), false);
                let case = format!("{status} {body:?} {method}");
                let expected: &[&str] = if body == BodyShape::Empty { &[] } else { &["3"] };
                assert_eq!(values(&head, "content-length"), expected, "{case}: {head}");
                assert!(values(&head, "transfer-encoding").is_empty(), "{case}: {head}");
                assert_eq!(written_, written(BodyFraming::None, false), "{case}");
            }
        }
    }
}

#[test]
fn a_head_answer_with_no_content_or_not_modified_states_no_length_it_was_not_given() {
    // hyper writes none here (`can_have_content_length` is false for 204 / 304), and a 204
    // must not carry one (RFC 9110 section 8.6).
    for status in [204, 304] {
        let (head, written_) = mk_head(status, &[], BodyShape::Exact(3), Method::HEAD, false);
        assert!(values(&head, "content-length").is_empty(), "{status}: {head}");
        assert_eq!(written_, written(BodyFraming::None, false), "{status}");
    }
}

#[test]
fn a_transfer_encoding_field_is_never_written_through() {
    let cases = [
        (200, BodyShape::Unknown, Method::GET, Some("chunked")),
        (200, BodyShape::Exact(3), Method::GET, None),
        (200, BodyShape::Empty, Method::GET, None),
        (200, BodyShape::Unknown, Method::HEAD, None),
        (204, BodyShape::Unknown, Method::GET, None),
    ];
    for (status, body, method, expected) in cases {
        let (head, _) = mk_head(status, &[("transfer-encoding", "gzip, chunked")], body, method, false);
        assert_eq!(
            values(&head, "transfer-encoding"),
            expected.into_iter().collect::<Vec<_>>(),
            "{status} {body:?}: {head}"
        );
    }
}

#[test]
fn close_adds_one_connection_close_and_a_close_field_counts_as_asked() {
    let (head, written_) = mk_head(200, &[], BodyShape::Exact(1), Method::GET, true);
    assert_eq!(values(&head, "connection"), ["close"]);
    assert_eq!(written_, written(BodyFraming::Length(1), true));
    for close in [false, true] {
        let (head, written_) = mk_head(200, &[("connection", "close")], BodyShape::Exact(1), Method::GET, close);
        assert_eq!(values(&head, "connection"), ["close"], "close={close}");
        assert_eq!(written_, written(BodyFraming::Length(1), true), "close={close}");
    }
    let (head, written_) = mk_head(
        200,
        &[("connection", "Upgrade, CLOSE")],
        BodyShape::Empty,
        Method::GET,
        false,
    );
    assert_eq!(values(&head, "connection"), ["Upgrade, CLOSE"]);
    assert!(written_.unwrap().close);
    let (head, written_) = mk_head(
        200,
        &[("connection", "keep-alive")],
        BodyShape::Empty,
        Method::GET,
        false,
    );
    assert_eq!(values(&head, "connection"), ["keep-alive"]);
    assert!(!written_.unwrap().close);
}

#[test]
fn a_date_field_is_added_once_when_absent_and_kept_when_present() {
    let (head, _) = mk_head(200, &[], BodyShape::Empty, Method::GET, false);
    let dates = values(&head, "date");
    assert_eq!(dates.len(), 1, "{head}");
    assert!(httpdate::parse_http_date(dates[0]).is_ok(), "{head}");
    let given = "Sun, 06 Nov 1994 08:49:37 GMT";
    let (head, _) = mk_head(200, &[("date", given)], BodyShape::Empty, Method::GET, false);
    assert_eq!(values(&head, "date"), [given]);
}

#[test]
fn an_informational_status_becomes_a_500_that_closes() {
    for status in [100, 102, 103] {
        let (head, written_) = mk_head(status, &[("x-a", "1")], BodyShape::Exact(3), Method::GET, false);
        let (line, _) = split_head(&head);
        assert_eq!(line, "HTTP/1.1 500 Internal Server Error", "{status}");
        assert_eq!(values(&head, "content-length"), ["0"]);
        assert_eq!(values(&head, "connection"), ["close"]);
        assert!(values(&head, "x-a").is_empty(), "{head}");
        assert_eq!(values(&head, "date").len(), 1, "{head}");
        assert_eq!(written_, written(BodyFraming::None, true));
    }
}

#[test]
fn the_status_line_has_the_canonical_reason_or_none() {
    for (status, line) in [
        (200, "HTTP/1.1 200 OK"),
        (404, "HTTP/1.1 404 Not Found"),
        (599, "HTTP/1.1 599 <none>"),
    ] {
        let (head, _) = mk_head(status, &[], BodyShape::Empty, Method::GET, false);
        assert_eq!(split_head(&head).0, line);
    }
}

// === the same response through hyper ===

/// A response body of the given shape that yields `data`.
struct Shaped {
    shape: BodyShape,
    data: Option<Bytes>,
}

impl Shaped {
    fn new(shape: BodyShape, n: usize) -> Self {
        let data = (shape != BodyShape::Empty).then(|| Bytes::from(vec![b'x'; n]));
        Shaped { shape, data }
    }
}

impl Body for Shaped {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().data.take().map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.shape {
            BodyShape::Exact(n) => SizeHint::with_exact(n),
            BodyShape::Empty => SizeHint::with_exact(0),
            BodyShape::Unknown => SizeHint::default(),
        }
    }
}

/// The head hyper's HTTP/1.1 server writes for this response to `method`.
async fn hyper_head(status: StatusCode, headers: HeaderMap, shape: BodyShape, n: usize, method: &Method) -> String {
    let (mut client, server) = tokio::io::duplex(64 * 1024);
    let service = hyper::service::service_fn(move |_| {
        let mut response = Response::new(Shaped::new(shape, n));
        *response.status_mut() = status;
        *response.headers_mut() = headers.clone();
        async move { Ok::<_, Infallible>(response) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(server), service);
    let serving = tokio::spawn(connection);
    let length = if method == Method::POST {
        "content-length: 0\r\n"
    } else {
        ""
    };
    let request = format!("{method} / HTTP/1.1\r\nhost: example.com\r\n{length}\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    let end = loop {
        if let Some(at) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), client.read(&mut buf))
            .await
            .expect("hyper answers within 5 s")
            .unwrap();
        assert!(
            n > 0,
            "hyper closed before a whole head: {:?}",
            String::from_utf8_lossy(&read)
        );
        read.extend_from_slice(&buf[..n]);
    };
    drop(client);
    serving.abort();
    String::from_utf8(read[..end].to_vec()).expect("hyper's head is ASCII")
}

/// The status line and the fields but `date` (sorted), checking there is one `date`.
fn comparable(head: &str) -> (String, Vec<(String, String)>) {
    let (line, fields) = split_head(head);
    assert_eq!(values(head, "date").len(), 1, "one date field: {head}");
    let mut fields: Vec<_> = fields
        .into_iter()
        .filter(|(name, _)| !name.eq_ignore_ascii_case("date"))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.to_string()))
        .collect();
    fields.sort();
    (line.to_string(), fields)
}

fn shape() -> impl Strategy<Value = (BodyShape, usize)> {
    prop_oneof![
        Just((BodyShape::Empty, 0)),
        (0usize..20).prop_map(|n| (BodyShape::Exact(n as u64), n)),
        (0usize..20).prop_map(|n| (BodyShape::Unknown, n)),
    ]
}

proptest! {
    // Each case runs a hyper server: few cases.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn our_head_matches_hyper_for_the_same_response(
        status in prop_oneof![Just(200u16), Just(201), Just(204), Just(301), Just(304), Just(404), Just(500), Just(599)],
        method in prop_oneof![Just(Method::GET), Just(Method::HEAD), Just(Method::POST)],
        (shape, n) in shape(),
        with_length in any::<bool>(),
        fields in proptest::collection::vec(("x-[a-z]{1,8}", "[!-~]([ -~]{0,20}[!-~])?"), 0..4),
    ) {
        let status = StatusCode::from_u16(status).unwrap();
        let mut headers = HeaderMap::new();
        for (name, value) in &fields {
            headers.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        if with_length {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(n));
        }
        // What our loop sees of the body hyper sees.
        prop_assert_eq!(BodyShape::of(&Shaped::new(shape, n)), shape);
        let mut ours = Vec::new();
        encode_head(&mut ours, status, &headers, shape, &method, false).unwrap();
        let ours = String::from_utf8(ours).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let theirs = runtime.block_on(hyper_head(status, headers, shape, n, &method));
        prop_assert_eq!(comparable(&ours), comparable(&theirs), "ours:\n{}hyper's:\n{}", ours, theirs);
    }
}
