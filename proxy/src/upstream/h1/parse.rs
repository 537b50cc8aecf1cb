//! The response head (RFC 9112 §4, §6.3), strictly: status line, fields and how the body is framed.

use std::mem::MaybeUninit;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Version, header};

use super::{H1Error, framing::Decoder};
use crate::h1::parse_length;

#[cfg(test)]
mod tests;

/// The largest response head we read. The e2e backends send a few KiB at most; nginx's default
/// (`proxy_buffer_size`) is a page, so this is generous.
pub const MAX_HEAD: usize = 64 * 1024;
/// Fields per head (and per chunked trailer section); httparse takes a fixed array.
pub const MAX_HEADERS: usize = 128;

/// A parsed response head.
#[derive(Debug)]
pub struct Head {
    pub status: StatusCode,
    pub version: Version,
    pub headers: HeaderMap,
    /// Bytes the head took at the front of the buffer.
    pub len: usize,
    /// How the body that follows is read.
    pub body: Decoder,
    /// Neither side said close (HTTP/1.0: the pod said keep-alive).
    pub keep_alive: bool,
}

/// Parses a head at the front of `buf`: `Ok(None)` while it is incomplete. `head_request`: the
/// request was HEAD, so no body follows whatever the fields say.
pub fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, H1Error> {
    // Uninitialised: httparse writes a slot before it hands it back, and clearing all 128 slots
    // (4 KiB) cost more than the rest of a short head's parse.
    let mut fields = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let config = httparse::ParserConfig::default();
    let len = match config.parse_response_with_uninit_headers(&mut response, buf, &mut fields) {
        Ok(httparse::Status::Complete(len)) if len <= MAX_HEAD => len,
        Ok(httparse::Status::Complete(_)) => return Err(H1Error::HeadTooLarge),
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => return Err(H1Error::HeadTooLarge),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(H1Error::InvalidHeader("count over the limit")),
        Err(error) => return Err(H1Error::InvalidHead(error)),
    };
    let version = match response.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    let code = response.code.unwrap_or_default();
    let status = StatusCode::from_u16(code).map_err(|_| H1Error::InvalidHeader("status code"))?;
    // One exact-size copy of the head holds every value, so the read buffer is free for reuse
    // (values sliced from it would pin it until the response is gone).
    let copy = Bytes::copy_from_slice(&buf[..len]);
    let base = buf.as_ptr() as usize;
    let mut headers = HeaderMap::with_capacity(response.headers.len());
    let mut framing = Framing::default();
    for field in response.headers.iter() {
        let name = HeaderName::from_bytes(field.name.as_bytes()).map_err(|_| H1Error::InvalidHeader("name"))?;
        framing.note(&name, field.value)?;
        if manages_only_this_connection(&name, field.value) {
            continue;
        }
        let start = field.value.as_ptr() as usize - base;
        let value = HeaderValue::from_maybe_shared(copy.slice(start..start + field.value.len()))
            .map_err(|_| H1Error::InvalidHeader("value"))?;
        headers.append(name, value);
    }
    let keep_alive = match version {
        Version::HTTP_10 => framing.keep_alive,
        _ => !framing.close,
    } && !framing.is_ambiguous();
    if framing.listed
        && let Some(length) = framing.length
    {
        // RFC 9110 §8.6: a list of equal lengths may be replaced by the one value, and must not
        // be forwarded as it is: clients and caches read a list in different ways.
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    let body = framing.decoder(status, version, head_request)?;
    Ok(Some(Head {
        status,
        version,
        headers,
        len,
        body,
        keep_alive,
    }))
}

/// `Connection: keep-alive` and `Keep-Alive`: read for this connection and hop-by-hop, so the
/// proxy would only strip them again (RFC 9110 §7.6.1); most pods send the first on every
/// response. Left out of the map they cost no insert and no removal. Any other `Connection`
/// stays, so that the fields it names (a field called `close` too) are stripped with it.
fn manages_only_this_connection(name: &HeaderName, value: &[u8]) -> bool {
    if *name == header::CONNECTION {
        value
            .split(|&b| b == b',')
            .map(trim)
            .all(|token| token.is_empty() || token.eq_ignore_ascii_case(b"keep-alive"))
    } else {
        name.as_str() == "keep-alive"
    }
}

/// What the fields say about framing and the connection.
#[derive(Default)]
struct Framing {
    length: Option<u64>,
    /// More than one length was given (a list, or repeated fields), all equal.
    listed: bool,
    /// Transfer codings seen; `Some(true)` when the last one is chunked.
    chunked_last: Option<bool>,
    close: bool,
    keep_alive: bool,
}

impl Framing {
    fn note(&mut self, name: &HeaderName, value: &[u8]) -> Result<(), H1Error> {
        if name == header::CONTENT_LENGTH {
            // A list (`5, 5`) or repeated fields are fine when every value is the same.
            for item in value.split(|&b| b == b',') {
                let length = parse_length(trim(item)).ok_or(H1Error::Framing("invalid content-length"))?;
                if let Some(seen) = self.length {
                    if seen != length {
                        return Err(H1Error::Framing("content-length values differ"));
                    }
                    self.listed = true;
                }
                self.length = Some(length);
            }
        } else if name == header::TRANSFER_ENCODING {
            for coding in value.split(|&b| b == b',').map(trim) {
                if coding.is_empty() {
                    continue;
                }
                // Chunked applied twice, or anything after it, is not a valid message.
                if self.chunked_last == Some(true) {
                    return Err(H1Error::Framing("transfer coding after chunked"));
                }
                self.chunked_last = Some(coding.eq_ignore_ascii_case(b"chunked"));
            }
        } else if name == header::CONNECTION {
            for token in value.split(|&b| b == b',').map(trim) {
                self.close |= token.eq_ignore_ascii_case(b"close");
                self.keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        }
        Ok(())
    }

    /// Both `Content-Length` and `Transfer-Encoding`: RFC 9112 §6.3 (3) says the coding wins and
    /// the length goes (`proxy::respond` drops it), and the message "ought to be handled as an
    /// error": the body is read by its coding, and the connection is never reused, so whatever
    /// the pod meant by the length cannot become the start of the next response (splitting).
    fn is_ambiguous(&self) -> bool {
        self.length.is_some() && self.chunked_last.is_some()
    }

    /// RFC 9112 §6.3. Differing lengths have no reading that is not a guess: an error.
    fn decoder(&self, status: StatusCode, version: Version, head_request: bool) -> Result<Decoder, H1Error> {
        if self.chunked_last.is_some() && version == Version::HTTP_10 {
            return Err(H1Error::Framing("transfer-encoding in an http/1.0 response"));
        }
        let bodiless = head_request
            || status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED;
        Ok(match (self.chunked_last, self.length) {
            _ if bodiless => Decoder::empty(),
            (Some(true), _) => Decoder::chunked(),
            (Some(false), _) => Decoder::until_close(),
            (None, Some(length)) => Decoder::length(length),
            (None, None) => Decoder::until_close(),
        })
    }
}

fn trim(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}
