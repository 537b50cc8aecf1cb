//! A client's request head, read by our loop when it is a plain one; anything else is left to
//! hyper, which reads the connection from the same byte on.
//!
//! Ours: HTTP/1.1, any method but CONNECT, no `Upgrade`, `Expect`, `TE` or `Transfer-Encoding`,
//! and a body given by one `Content-Length` of at most [`MAX_READ_BODY`] bytes, all read with
//! the head. Hyper takes everything else, malformed heads included, so its 400 / 431 answers
//! stay the only ones.

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Uri, Version, header};

use crate::{body::ClientBody, h1::parse_length};

#[cfg(test)]
mod tests;

/// hyper's default limit on fields per head, so a head over it still gets hyper's 431.
pub const MAX_FIELDS: usize = 100;

/// The largest body read whole with its head (as large as the replay copy a retry keeps).
pub const MAX_READ_BODY: usize = crate::body::REPLAY_LIMIT;

/// What the bytes read so far hold.
#[derive(Debug)]
// Returned once per head and unpacked at once: boxing the request would add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Parsed {
    /// Not a whole request yet: read on.
    Partial,
    /// A request ours to serve; its head and body took `consumed` bytes.
    Request {
        request: Request<ClientBody>,
        consumed: usize,
        /// The client asked to close after this one.
        close: bool,
    },
    /// Hyper's to read, from the first byte of `buf`.
    HandOver,
}

/// Reads one request from the start of `buf`; `max_head` is the most a head may take.
pub fn parse(buf: &BytesMut, max_head: usize) -> Parsed {
    // Uninitialised: httparse writes a slot before it hands it back, and a head of a few fields
    // should not pay for clearing a hundred.
    let mut fields = [const { MaybeUninit::uninit() }; MAX_FIELDS];
    let mut head = httparse::Request::new(&mut []);
    let config = httparse::ParserConfig::default();
    let len = match config.parse_request_with_uninit_headers(&mut head, buf, &mut fields) {
        Ok(httparse::Status::Complete(len)) if len <= max_head => len,
        Ok(httparse::Status::Partial) if buf.len() < max_head => return Parsed::Partial,
        // Too large, too many fields, malformed: hyper answers it.
        _ => return Parsed::HandOver,
    };
    if head.version != Some(1) {
        return Parsed::HandOver;
    }
    let Some(method) = head
        .method
        .and_then(|method| Method::from_bytes(method.as_bytes()).ok())
    else {
        return Parsed::HandOver;
    };
    if method == Method::CONNECT {
        return Parsed::HandOver;
    }
    // One copy of the head; the target and the field values are slices of it.
    let copy = Bytes::copy_from_slice(&buf[..len]);
    let base = buf.as_ptr() as usize;
    let slice_of = |part: &[u8]| {
        let start = part.as_ptr() as usize - base;
        copy.slice(start..start + part.len())
    };
    let Some(uri) = head
        .path
        .and_then(|path| Uri::from_maybe_shared(slice_of(path.as_bytes())).ok())
    else {
        return Parsed::HandOver;
    };
    let mut headers = HeaderMap::with_capacity(head.headers.len());
    let mut length: Option<u64> = None;
    let mut close = false;
    for field in head.headers.iter() {
        let Ok(name) = HeaderName::from_bytes(field.name.as_bytes()) else {
            return Parsed::HandOver;
        };
        match name {
            header::CONTENT_LENGTH => match (length, parse_length(field.value)) {
                (None, Some(value)) => length = Some(value),
                _ => return Parsed::HandOver,
            },
            header::TRANSFER_ENCODING | header::UPGRADE | header::EXPECT | header::TE => return Parsed::HandOver,
            header::CONNECTION => close |= super::names_close(field.value),
            _ => {}
        }
        let Ok(value) = HeaderValue::from_maybe_shared(slice_of(field.value)) else {
            return Parsed::HandOver;
        };
        headers.append(name, value);
    }
    let body_len = match length {
        Some(length) if length > MAX_READ_BODY as u64 => return Parsed::HandOver,
        Some(length) => length as usize,
        None => 0,
    };
    let consumed = len + body_len;
    if buf.len() < consumed {
        // The rest of the body is still coming: hyper reads it, under the body timeout.
        return Parsed::HandOver;
    }
    let body = (body_len > 0).then(|| Bytes::copy_from_slice(&buf[len..consumed]));
    let mut request = Request::new(ClientBody::Read(body));
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = Version::HTTP_11;
    *request.headers_mut() = headers;
    Parsed::Request {
        request,
        consumed,
        close,
    }
}
