//! The request head and body framing on the wire (RFC 9112 §3, §6, §7.1).

use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use http_body::Body as _;

use super::H1Error;
use crate::{
    body::RequestBody,
    h1::{digits, parse_length},
    headers::has_field,
};

#[cfg(test)]
mod tests;

/// How the request body goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body and no framing field (hyper's rule for an empty body, any method).
    Empty,
    /// Exactly this many bytes; `add` says whether we write the `content-length` field (the
    /// request did not carry one).
    Length {
        length: u64,
        add: bool,
    },
    Chunked,
}

/// The framing for `body`: the request's own `Content-Length` when it has one, else the body's
/// exact size, else chunked. An ended body gets none: what hyper sends (its `set_length` with no
/// body removes `Transfer-Encoding` and adds nothing, whatever the method).
pub fn request_framing(headers: &HeaderMap, body: &RequestBody) -> Result<Framing, H1Error> {
    if let Some(length) = content_length(headers)? {
        return Ok(Framing::Length { length, add: false });
    }
    if body.is_end_stream() {
        return Ok(Framing::Empty);
    }
    Ok(match body.size_hint().exact() {
        Some(length) => Framing::Length { length, add: true },
        None => Framing::Chunked,
    })
}

/// Every `Content-Length` value, which must agree.
fn content_length(headers: &HeaderMap) -> Result<Option<u64>, H1Error> {
    if !has_field(headers, &header::CONTENT_LENGTH) {
        return Ok(None);
    }
    let mut found = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        for item in value.as_bytes().split(|&b| b == b',') {
            let length = parse_length(item.trim_ascii()).ok_or(H1Error::RequestContentLength)?;
            if found.is_some_and(|seen| seen != length) {
                return Err(H1Error::RequestContentLength);
            }
            found = Some(length);
        }
    }
    Ok(found)
}

/// Appends `METHOD SP target SP HTTP/1.1 CRLF`, the fields, the framing field and the empty line.
/// `Transfer-Encoding` from `headers` is never written: `framing` decides it alone, so the head
/// carries exactly one framing field.
pub fn encode_head<'a>(
    out: &mut Vec<u8>,
    method: &Method,
    target: &str,
    fields: impl Iterator<Item = (&'a HeaderName, &'a HeaderValue)>,
    framing: Framing,
) {
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in fields {
        if name == header::TRANSFER_ENCODING {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match framing {
        Framing::Length { length, add: true } => {
            out.extend_from_slice(b"content-length: ");
            digits(length, 10, |digit| out.push(digit));
            out.extend_from_slice(b"\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        Framing::Empty | Framing::Length { add: false, .. } => {}
    }
    out.extend_from_slice(b"\r\n");
}
