//! Response framing across the proxy: the upstream's framing headers never decide ours.
//!
//! A response with both Transfer-Encoding and Content-Length is framed by Transfer-Encoding
//! (RFC 9112 §6.3), and our pod client (upstream/h1) decodes it that way, but it leaves the Content-Length
//! header in place. Passed on, that header would make our server frame the re-encoded body by
//! a length that is not its length: a truncated body or a reset for the client. RFC 9112 §6.3
//! says a proxy must drop it; we do, before Transfer-Encoding goes with the hop-by-hop headers.

use http::{HeaderMap, header};

/// Removes Content-Length when Transfer-Encoding is present.
pub fn drop_length_beside_transfer_encoding(headers: &mut HeaderMap) {
    if super::has_field(headers, &header::TRANSFER_ENCODING) {
        headers.remove(header::CONTENT_LENGTH);
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn content_length_goes_when_transfer_encoding_is_present() {
        let mut headers = HeaderMap::new();
        headers.insert(header::TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("5"));
        drop_length_beside_transfer_encoding(&mut headers);
        assert!(!headers.contains_key(header::CONTENT_LENGTH));
        assert!(headers.contains_key(header::TRANSFER_ENCODING));
    }

    #[test]
    fn content_length_alone_is_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("5"));
        drop_length_beside_transfer_encoding(&mut headers);
        assert_eq!(headers.get(header::CONTENT_LENGTH).unwrap(), "5");
    }
}
