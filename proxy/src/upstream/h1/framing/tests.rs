use bytes::BytesMut;
use proptest::prelude::*;

use super::*;

/// Decodes `wire` fed in `pieces`-sized reads, then EOF: the data, the trailers, or the error.
fn mk_decoded(mut decoder: Decoder, wire: &[u8], piece: usize) -> Result<(Vec<u8>, HeaderMap, usize), H1Error> {
    let mut buf = BytesMut::new();
    let mut rest = wire;
    let (mut data, mut trailers) = (Vec::new(), HeaderMap::new());
    for _ in 0..wire.len() * 4 + 16 {
        let eof = rest.is_empty();
        match decoder.decode(&mut buf, eof)? {
            Decoded::Data(bytes) => data.extend_from_slice(&bytes),
            Decoded::Trailers(fields) => trailers = fields,
            Decoded::End => return Ok((data, trailers, buf.len() + rest.len())),
            Decoded::More => {
                let take = piece.max(1).min(rest.len());
                buf.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
            }
        }
    }
    panic!("decoding did not end")
}

#[test]
fn a_length_body_ends_at_its_length_and_leaves_the_rest() {
    let (data, _, left) = mk_decoded(Decoder::length(5), b"helloXX", 3).unwrap();
    assert_eq!(data, b"hello");
    assert_eq!(left, 2);
}

#[test]
fn a_length_body_cut_short_is_truncated() {
    assert!(matches!(
        mk_decoded(Decoder::length(5), b"hel", 2),
        Err(H1Error::Truncated)
    ));
}

#[test]
fn a_close_delimited_body_is_everything_until_eof() {
    let (data, _, _) = mk_decoded(Decoder::until_close(), b"all of it", 4).unwrap();
    assert_eq!(data, b"all of it");
}

#[test]
fn chunks_with_extensions_and_trailers_decode() {
    let wire = b"5;name=value\r\nhello\r\n6 ; x\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n";
    let (data, trailers, left) = mk_decoded(Decoder::chunked(), wire, 1).unwrap();
    assert_eq!(data, b"hello world");
    assert_eq!(trailers["x-sum"], "42");
    assert_eq!(left, 0);
}

#[test]
fn a_bare_lf_or_missing_crlf_in_chunks_is_an_error() {
    assert!(mk_decoded(Decoder::chunked(), b"5\nhello\r\n0\r\n\r\n", 64).is_err());
    assert!(mk_decoded(Decoder::chunked(), b"5\r\nhelloXX0\r\n\r\n", 64).is_err());
    assert!(mk_decoded(Decoder::chunked(), b"0\r\n\n", 64).is_err());
    assert!(mk_decoded(Decoder::chunked(), b"zz\r\n", 64).is_err());
    assert!(mk_decoded(Decoder::chunked(), b"5 x\r\nhello\r\n", 64).is_err());
}

#[test]
fn a_size_line_over_the_bound_is_an_error() {
    let wire = format!("5;{}\r\nhello\r\n0\r\n\r\n", "e".repeat(MAX_CHUNK_LINE));
    assert!(matches!(
        mk_decoded(Decoder::chunked(), wire.as_bytes(), 512),
        Err(H1Error::Chunk(_))
    ));
}

#[test]
fn trailers_over_the_bound_are_an_error() {
    let wire = format!("0\r\nX-Big: {}\r\n\r\n", "v".repeat(MAX_TRAILERS));
    assert!(matches!(
        mk_decoded(Decoder::chunked(), wire.as_bytes(), 4096),
        Err(H1Error::Chunk(_))
    ));
}

#[test]
fn a_chunked_body_cut_short_is_truncated() {
    assert!(matches!(
        mk_decoded(Decoder::chunked(), b"5\r\nhel", 2),
        Err(H1Error::Truncated)
    ));
    assert!(matches!(
        mk_decoded(Decoder::chunked(), b"5\r\nhello\r\n", 2),
        Err(H1Error::Truncated)
    ));
}

proptest! {
    #[test]
    fn chunk_sizes_beyond_the_bound_error(digits in "[1-9a-fA-F][0-9a-fA-F]{15,30}") {
        let wire = format!("{digits}\r\n");
        prop_assert!(matches!(mk_decoded(Decoder::chunked(), wire.as_bytes(), 64), Err(H1Error::Chunk(_))));
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_chunked_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..512), piece in 1usize..64) {
        let _ = mk_decoded(Decoder::chunked(), &bytes, piece);
    }

    #[test]
    fn chunks_split_anywhere_decode_to_the_same_bytes(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..300), 0..8),
        piece in 1usize..100,
    ) {
        let mut wire = Vec::new();
        for chunk in &chunks {
            crate::h1::encode_chunk(&mut wire, chunk);
        }
        crate::h1::encode_last_chunk(&mut wire, None);
        let (data, _, left) = mk_decoded(Decoder::chunked(), &wire, piece).unwrap();
        prop_assert_eq!(data, chunks.concat());
        prop_assert_eq!(left, 0);
    }
}
