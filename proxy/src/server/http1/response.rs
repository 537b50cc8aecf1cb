//! Our loop's response head, framed by hyper's rules for an HTTP/1.1 client: a body of known
//! length gets `content-length`, one of unknown length is chunked, and responses to HEAD and
//! 204 / 304 carry none.

use std::{cell::RefCell, time::SystemTime};

use http::{HeaderMap, Method, StatusCode, header};
use http_body::Body;

use crate::h1::{digits, parse_length};

#[cfg(test)]
mod tests;

/// What the response body is, as far as its head can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyShape {
    Empty,
    Exact(u64),
    Unknown,
}

/// How the body follows the head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFraming {
    /// Nothing follows (HEAD, 204, 304, 1xx, empty).
    None,
    Length(u64),
    Chunked,
}

/// The head as written: its body's framing, and whether the connection ends after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub framing: BodyFraming,
    pub close: bool,
}

/// A `content-length` we were handed that does not parse, on a body of unknown length.
#[derive(Debug, PartialEq, Eq)]
pub struct InvalidLength;

impl BodyShape {
    pub fn of(body: &impl Body) -> Self {
        if body.is_end_stream() {
            BodyShape::Empty
        } else {
            match body.size_hint().exact() {
                Some(length) => BodyShape::Exact(length),
                None => BodyShape::Unknown,
            }
        }
    }
}

/// The framing of a response whose fields named none: the field we write for it, if any.
/// `head_length`: a HEAD answer that may state the length a GET would get.
fn frame_by_ourselves(out: &mut Vec<u8>, body: BodyShape, has_body: bool, head_length: bool) -> BodyFraming {
    match body {
        BodyShape::Empty if has_body => {
            out.extend_from_slice(b"content-length: 0\r\n");
            BodyFraming::Length(0)
        }
        BodyShape::Exact(length) if has_body || (head_length && length > 0) => {
            out.extend_from_slice(b"content-length: ");
            digits(length, 10, |digit| out.push(digit));
            out.extend_from_slice(b"\r\n");
            if has_body {
                BodyFraming::Length(length)
            } else {
                BodyFraming::None
            }
        }
        BodyShape::Unknown if has_body => {
            out.extend_from_slice(b"transfer-encoding: chunked\r\n");
            BodyFraming::Chunked
        }
        _ => BodyFraming::None,
    }
}

/// Writes the status line and fields to `out`; `close` when the connection ends after this
/// response whatever the fields say (the client asked, or we are draining).
pub fn encode_head(
    out: &mut Vec<u8>,
    status: StatusCode,
    headers: &HeaderMap,
    body: BodyShape,
    method: &Method,
    close: bool,
) -> Result<Written, InvalidLength> {
    if status.is_informational() {
        // A 1xx cannot be the final answer: hyper answers 500 instead, and closes (we say so).
        out.extend_from_slice(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n");
        end_head(out, true);
        return Ok(Written {
            framing: BodyFraming::None,
            close: true,
        });
    }
    status_line(out, status);
    let head_request = method == Method::HEAD;
    let has_body = !head_request && may_state_length(status);
    let mut framing = None;
    let mut close = close;
    let mut said_close = false;
    let mut has_date = false;
    for (name, value) in headers {
        match *name {
            header::CONTENT_LENGTH => {
                if framing.is_some() {
                    continue;
                }
                framing = Some(match body {
                    // hyper's rule: an empty body drops the field (ours below says 0 where a
                    // length may go); a HEAD answer keeps the length a GET would get.
                    BodyShape::Empty if !head_request => continue,
                    BodyShape::Exact(length) if has_body => BodyFraming::Length(length),
                    BodyShape::Unknown if has_body => {
                        let length = parse_length(value.as_bytes()).ok_or(InvalidLength)?;
                        BodyFraming::Length(length)
                    }
                    // HEAD, 204, 304: the field passes, no body follows.
                    _ => BodyFraming::None,
                });
            }
            // Ours to choose, below.
            header::TRANSFER_ENCODING => continue,
            header::CONNECTION => {
                let closes = super::names_close(value.as_bytes());
                said_close |= closes;
                close |= closes;
            }
            header::DATE => has_date = true,
            _ => {}
        }
        field(out, name.as_str().as_bytes(), value.as_bytes());
    }
    let framing = match framing {
        Some(framing) if has_body => framing,
        Some(_) => BodyFraming::None,
        None => frame_by_ourselves(out, body, has_body, head_request && may_state_length(status)),
    };
    if close && !said_close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    end_head(out, !has_date);
    Ok(Written { framing, close })
}

/// 204 and 304 answers have no body, and we state no length for them (RFC 9110 §8.6).
fn may_state_length(status: StatusCode) -> bool {
    status != StatusCode::NO_CONTENT && status != StatusCode::NOT_MODIFIED
}

fn status_line(out: &mut Vec<u8>, status: StatusCode) {
    if status == StatusCode::OK {
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        return;
    }
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    // A reason must be there for some parsers; hyper writes this one for codes without one.
    out.extend_from_slice(status.canonical_reason().unwrap_or("<none>").as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn end_head(out: &mut Vec<u8>, add_date: bool) {
    if add_date {
        out.extend_from_slice(b"date: ");
        CACHED_DATE.with(|date| out.extend_from_slice(date.borrow_mut().now()));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

thread_local! {
    /// Formatted once a second per worker, as hyper does.
    static CACHED_DATE: RefCell<CachedDate> = const { RefCell::new(CachedDate { second: 0, text: [0; 29] }) };
}

struct CachedDate {
    /// Seconds since the epoch `text` says.
    second: u64,
    /// `Sun, 06 Nov 1994 08:49:37 GMT` is 29 bytes.
    text: [u8; 29],
}

impl CachedDate {
    fn now(&mut self) -> &[u8] {
        let now = SystemTime::now();
        let second = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        if second != self.second || self.text[0] == 0 {
            let formatted = httpdate::fmt_http_date(now);
            if formatted.len() == self.text.len() {
                self.text.copy_from_slice(formatted.as_bytes());
                self.second = second;
            }
        }
        &self.text
    }
}
