use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use proptest::prelude::*;

use super::*;
use crate::h1::{encode_chunk, encode_last_chunk};

/// Parses `wire` back as a request: method, path, fields (name, value) in order.
fn mk_parsed(wire: &[u8]) -> (String, String, Vec<(String, Vec<u8>)>) {
    let mut fields = [httparse::EMPTY_HEADER; 256];
    let mut request = httparse::Request::new(&mut fields);
    let status = request.parse(wire).expect("what we write parses");
    assert_eq!(
        status,
        httparse::Status::Complete(wire.len()),
        "the head is all that was written"
    );
    assert_eq!(request.version, Some(1));
    let fields = request
        .headers
        .iter()
        .map(|f| (f.name.to_string(), f.value.to_vec()))
        .collect();
    (
        request.method.unwrap().to_string(),
        request.path.unwrap().to_string(),
        fields,
    )
}

fn framing_fields(fields: &[(String, Vec<u8>)]) -> Vec<&str> {
    fields
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding"))
        .collect()
}

#[test]
fn an_empty_body_gets_no_framing_field_for_any_method() {
    for method in [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
        let framing = request_framing(&HeaderMap::new(), &RequestBody::Empty).unwrap();
        assert_eq!(framing, Framing::Empty);
        let mut wire = Vec::new();
        encode_head(&mut wire, &method, "/", HeaderMap::new().iter(), framing);
        let (_, _, fields) = mk_parsed(&wire);
        assert!(framing_fields(&fields).is_empty(), "{method}");
    }
}

#[test]
fn the_requests_content_length_is_kept_and_conflicting_ones_rejected() {
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
    let framing = request_framing(&headers, &RequestBody::Empty).unwrap();
    assert_eq!(framing, Framing::Length { length: 0, add: false });
    headers.append(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
    assert!(matches!(
        request_framing(&headers, &RequestBody::Empty),
        Err(H1Error::RequestContentLength)
    ));
}

#[test]
fn a_transfer_encoding_field_is_never_written_beside_ours() {
    let mut headers = HeaderMap::new();
    headers.insert(header::TRANSFER_ENCODING, HeaderValue::from_static("gzip"));
    let mut wire = Vec::new();
    encode_head(&mut wire, &Method::POST, "/up", headers.iter(), Framing::Chunked);
    let (_, _, fields) = mk_parsed(&wire);
    assert_eq!(framing_fields(&fields), ["transfer-encoding"]);
    assert!(fields.iter().all(|(_, value)| value != b"gzip"));
}

#[test]
fn chunks_are_hex_sized_and_the_last_carries_trailers() {
    let mut wire = Vec::new();
    encode_chunk(&mut wire, &[b'a'; 26]);
    encode_chunk(&mut wire, b"");
    let mut trailers = HeaderMap::new();
    trailers.insert("x-sum", HeaderValue::from_static("7"));
    encode_last_chunk(&mut wire, Some(&trailers));
    let expected = format!("1a\r\n{}\r\n0\r\nx-sum: 7\r\n\r\n", "a".repeat(26));
    assert_eq!(String::from_utf8(wire).unwrap(), expected);
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        Just(Method::GET),
        Just(Method::POST),
        Just(Method::PUT),
        Just(Method::DELETE),
        Just(Method::HEAD),
        "[A-Z]{1,10}".prop_map(|m| Method::from_bytes(m.as_bytes()).unwrap()),
    ]
}

fn fields() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(("[a-z][a-z0-9-]{0,15}", "[!-~]([ -~]{0,30}[!-~])?"), 0..12)
}

proptest! {
    #[test]
    fn what_the_encoder_writes_parses_back_with_exactly_one_framing(
        method in method(),
        path in "/[a-zA-Z0-9._~!$&'()*+,;=:@/?%-]{0,60}",
        fields in fields(),
        framing in prop_oneof![
            Just(Framing::Empty),
            Just(Framing::Chunked),
            (0u64..u64::MAX).prop_map(|length| Framing::Length { length, add: true }),
        ],
    ) {
        let mut headers = HeaderMap::new();
        for (name, value) in &fields {
            let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
            if name == header::CONTENT_LENGTH || name == header::TRANSFER_ENCODING {
                continue;
            }
            headers.append(name, HeaderValue::from_str(value).unwrap());
        }
        let mut wire = Vec::new();
        encode_head(&mut wire, &method, &path, headers.iter(), framing);
        let (parsed_method, parsed_path, parsed) = mk_parsed(&wire);
        prop_assert_eq!(parsed_method, method.as_str());
        prop_assert_eq!(parsed_path, path);
        let expected: Vec<(String, Vec<u8>)> = headers
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), v.as_bytes().to_vec()))
            .collect();
        let (framed, rest): (Vec<_>, Vec<_>) = parsed
            .into_iter()
            .partition(|(n, _)| n == "content-length" || n == "transfer-encoding");
        prop_assert_eq!(rest, expected);
        match framing {
            Framing::Empty => prop_assert!(framed.is_empty()),
            Framing::Chunked => prop_assert_eq!(framed, vec![("transfer-encoding".to_string(), b"chunked".to_vec())]),
            Framing::Length { length, .. } => {
                prop_assert_eq!(framed, vec![("content-length".to_string(), length.to_string().into_bytes())]);
            }
        }
    }
}
