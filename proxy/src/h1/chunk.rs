//! The chunked transfer coding on the way out (RFC 9112 §7.1): our server's response bodies and
//! our client's request bodies.

use http::HeaderMap;

use super::digits;

/// Appends one chunk: `size-in-hex CRLF data CRLF`. Empty data would end the body: skipped.
pub fn encode_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    digits(data.len() as u64, 16, |digit| out.push(digit));
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends the last chunk and the trailer section.
pub fn encode_last_chunk(out: &mut Vec<u8>, trailers: Option<&HeaderMap>) {
    out.extend_from_slice(b"0\r\n");
    for (name, value) in trailers.into_iter().flatten() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}
