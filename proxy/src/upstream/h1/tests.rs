//! Responses written the way a pod writes them, read back in arbitrary pieces.

use bytes::BytesMut;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use proptest::prelude::*;

use super::{H1Error, framing::Decoded, parse::Head, parse_head};

#[derive(Debug, Clone)]
enum Wire {
    Length,
    Chunked {
        sizes: Vec<usize>,
        trailers: Vec<(String, String)>,
    },
    Close,
}

/// Reads a head, then the body, from `wire` split at `cuts`: what a connection would see.
fn mk_read(wire: &[u8], cuts: &[usize], head_request: bool) -> Result<(Head, Vec<u8>, HeaderMap), H1Error> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    points.push(wire.len());
    points.sort_unstable();
    let mut pieces = Vec::new();
    let mut at = 0;
    for point in points {
        pieces.push(&wire[at..point]);
        at = point;
    }
    let mut pieces = pieces.into_iter();
    let mut buf = BytesMut::new();
    let head = loop {
        if let Some(head) = parse_head(&buf, head_request)? {
            let _ = buf.split_to(head.len);
            break head;
        }
        match pieces.next() {
            Some(piece) => buf.extend_from_slice(piece),
            None => return Err(H1Error::ClosedBeforeResponse),
        }
    };
    let mut decoder = head.body.clone();
    let (mut data, mut trailers) = (Vec::new(), HeaderMap::new());
    let mut eof = false;
    loop {
        match decoder.decode(&mut buf, eof)? {
            Decoded::Data(bytes) => data.extend_from_slice(&bytes),
            Decoded::Trailers(fields) => trailers = fields,
            Decoded::End => return Ok((head, data, trailers)),
            Decoded::More => match pieces.next() {
                Some(piece) => buf.extend_from_slice(piece),
                None => eof = true,
            },
        }
    }
}

fn wire() -> impl Strategy<Value = Wire> {
    prop_oneof![
        Just(Wire::Length),
        Just(Wire::Close),
        (
            proptest::collection::vec(1usize..200, 0..6),
            proptest::collection::vec(("x-[a-z]{1,8}", "[!-~]{1,20}"), 0..3)
        )
            .prop_map(|(sizes, trailers)| Wire::Chunked { sizes, trailers }),
    ]
}

proptest! {
    #[test]
    fn any_valid_response_read_in_any_pieces_round_trips(
        status in prop_oneof![Just(200u16), Just(201), Just(404), Just(500), 205u16..299],
        fields in proptest::collection::vec(("x-[a-z0-9-]{1,12}", "[!-~]([ -~]{0,20}[!-~])?"), 0..10),
        body in proptest::collection::vec(any::<u8>(), 0..600),
        framing in wire(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut wire = format!("HTTP/1.1 {status} Whatever\r\n").into_bytes();
        for (name, value) in &fields {
            wire.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        let mut expected_trailers = HeaderMap::new();
        match &framing {
            Wire::Length => wire.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes()),
            Wire::Close => wire.extend_from_slice(b"connection: close\r\n\r\n"),
            Wire::Chunked { sizes, trailers } => {
                wire.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
                let mut rest = &body[..];
                for size in sizes {
                    let take = (*size).min(rest.len());
                    crate::h1::encode_chunk(&mut wire, &rest[..take]);
                    rest = &rest[take..];
                }
                crate::h1::encode_chunk(&mut wire, rest);
                for (name, value) in trailers {
                    let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
                    expected_trailers.append(name, HeaderValue::from_str(value).unwrap());
                }
                crate::h1::encode_last_chunk(&mut wire, Some(&expected_trailers));
            }
        }
        wire.extend_from_slice(&body[..if matches!(framing, Wire::Length | Wire::Close) { body.len() } else { 0 }]);
        let (head, data, trailers) = mk_read(&wire, &cuts, false).unwrap();
        prop_assert_eq!(head.status, StatusCode::from_u16(status).unwrap());
        for (name, value) in &fields {
            prop_assert!(head.headers.get_all(name.as_str()).iter().any(|v| v.as_bytes() == value.as_bytes()));
        }
        prop_assert_eq!(data, body);
        prop_assert_eq!(trailers, expected_trailers);
        prop_assert_eq!(head.keep_alive, !matches!(framing, Wire::Close));
    }

    #[test]
    fn arbitrary_bytes_read_as_a_response_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..700),
        cuts in proptest::collection::vec(any::<usize>(), 0..4),
        head_request in any::<bool>(),
    ) {
        let _ = mk_read(&bytes, &cuts, head_request);
    }
}
