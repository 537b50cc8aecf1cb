//! The response body as framed on the wire (RFC 9112 §6, §7.1): nothing, a length, chunks with
//! trailers, or everything until the pod closes. Data is split off the read buffer, never copied.

use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue};

use super::{H1Error, parse::MAX_HEADERS};

#[cfg(test)]
mod tests;

/// Longest chunk-size line, extensions included (hyper allows 4 KiB of extensions per chunk too).
pub const MAX_CHUNK_LINE: usize = 4096;
/// Largest trailer section.
pub const MAX_TRAILERS: usize = 16 * 1024;
/// Hex digits in a chunk size: 15 keeps every size below 2^60, so no sum of them overflows.
const MAX_SIZE_DIGITS: usize = 15;

/// Where a body is in its framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoder(State);

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Bytes of a `Content-Length` body still to come.
    Length(u64),
    /// Expecting a chunk-size line.
    ChunkSize,
    /// Bytes of the current chunk still to come, then its CRLF.
    ChunkData(u64),
    ChunkEnd,
    Trailers,
    /// Everything until the pod closes.
    Close,
    Done,
}

/// One step of decoding.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    Data(Bytes),
    Trailers(HeaderMap),
    /// The body ended (for a close-delimited one: the pod closed).
    End,
    /// More bytes are needed.
    More,
}

impl Decoder {
    pub fn empty() -> Self {
        Decoder(State::Done)
    }

    pub fn length(length: u64) -> Self {
        Decoder(if length == 0 {
            State::Done
        } else {
            State::Length(length)
        })
    }

    pub fn chunked() -> Self {
        Decoder(State::ChunkSize)
    }

    pub fn until_close() -> Self {
        Decoder(State::Close)
    }

    /// The body is complete; nothing more belongs to it.
    pub fn is_done(&self) -> bool {
        self.0 == State::Done
    }

    /// The body ends only when the pod closes: the connection cannot be reused.
    pub fn is_close_delimited(&self) -> bool {
        self.0 == State::Close
    }

    /// Bytes left of a `Content-Length` body.
    pub fn remaining(&self) -> Option<u64> {
        match self.0 {
            State::Length(left) => Some(left),
            State::Done => Some(0),
            _ => None,
        }
    }

    /// Up to `left` counted bytes (a length body or a chunk's data); then `more(rest)` while some
    /// are still due, `after` once they are all in.
    fn take(
        &mut self,
        buf: &mut BytesMut,
        left: u64,
        eof: bool,
        more: fn(u64) -> State,
        after: State,
    ) -> Result<Decoded, H1Error> {
        Ok(match take_counted(buf, left, eof)? {
            None => Decoded::More,
            Some((data, rest)) => {
                self.0 = if rest == 0 { after } else { more(rest) };
                Decoded::Data(data)
            }
        })
    }

    /// Decodes what `buf` holds; `eof`: the pod closed and nothing more will come.
    pub fn decode(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Decoded, H1Error> {
        loop {
            match self.0 {
                State::Done => return Ok(Decoded::End),
                State::Length(left) => return self.take(buf, left, eof, State::Length, State::Done),
                State::Close => {
                    if !buf.is_empty() {
                        return Ok(Decoded::Data(buf.split().freeze()));
                    }
                    if eof {
                        self.0 = State::Done;
                        return Ok(Decoded::End);
                    }
                    return Ok(Decoded::More);
                }
                State::ChunkSize => match chunk_size(buf)? {
                    Some(0) => self.0 = State::Trailers,
                    Some(size) => self.0 = State::ChunkData(size),
                    None if eof => return Err(H1Error::Truncated),
                    None => return Ok(Decoded::More),
                },
                State::ChunkData(left) => return self.take(buf, left, eof, State::ChunkData, State::ChunkEnd),
                State::ChunkEnd => {
                    if buf.len() < 2 {
                        return if eof {
                            Err(H1Error::Truncated)
                        } else {
                            Ok(Decoded::More)
                        };
                    }
                    if &buf[..2] != b"\r\n" {
                        return Err(H1Error::Chunk("no crlf after chunk data"));
                    }
                    buf.advance(2);
                    self.0 = State::ChunkSize;
                }
                State::Trailers => match trailers(buf)? {
                    Some(fields) => {
                        self.0 = State::Done;
                        if !fields.is_empty() {
                            return Ok(Decoded::Trailers(fields));
                        }
                    }
                    None if eof => return Err(H1Error::Truncated),
                    None => return Ok(Decoded::More),
                },
            }
        }
    }
}

/// Up to `left` bytes of a counted body (a length or a chunk) from `buf`, with how many are
/// left after them; `None` when `buf` is empty and more may come.
fn take_counted(buf: &mut BytesMut, left: u64, eof: bool) -> Result<Option<(Bytes, u64)>, H1Error> {
    if buf.is_empty() {
        return if eof { Err(H1Error::Truncated) } else { Ok(None) };
    }
    let take = left.min(buf.len() as u64);
    Ok(Some((buf.split_to(take as usize).freeze(), left - take)))
}

/// A chunk-size line (`1a;ext=x CRLF`) at the front of `buf`, consumed when complete.
fn chunk_size(buf: &mut BytesMut) -> Result<Option<u64>, H1Error> {
    let Some(newline) = buf.iter().take(MAX_CHUNK_LINE).position(|&b| b == b'\n') else {
        if buf.len() >= MAX_CHUNK_LINE {
            return Err(H1Error::Chunk("size line too long"));
        }
        return Ok(None);
    };
    let line = &buf[..newline];
    let Some(line) = line.strip_suffix(b"\r") else {
        return Err(H1Error::Chunk("bare lf"));
    };
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return Err(H1Error::Chunk("no size"));
    }
    if digits > MAX_SIZE_DIGITS {
        return Err(H1Error::Chunk("size too large"));
    }
    let size = line[..digits].iter().fold(0u64, |acc, &b| {
        (acc << 4) | u64::from((b as char).to_digit(16).unwrap_or(0))
    });
    // Whitespace before an extension (RFC 9112 §7.1.1 BWS), then `;ext` items, which we skip.
    let rest = line[digits..].trim_ascii_start();
    if !rest.is_empty() && rest[0] != b';' {
        return Err(H1Error::Chunk("junk after size"));
    }
    if rest.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(H1Error::Chunk("control byte in extension"));
    }
    buf.advance(newline + 1);
    Ok(Some(size))
}

/// The trailer section after the last chunk, through its empty line; `None` while incomplete.
fn trailers(buf: &mut BytesMut) -> Result<Option<HeaderMap>, H1Error> {
    if buf.starts_with(b"\r\n") {
        buf.advance(2);
        return Ok(Some(HeaderMap::new()));
    }
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let (len, count) = match httparse::parse_headers(buf, &mut fields) {
        Ok(httparse::Status::Complete((len, parsed))) if len <= MAX_TRAILERS => (len, parsed.len()),
        Ok(httparse::Status::Complete(_)) => return Err(H1Error::Chunk("trailers too large")),
        Ok(httparse::Status::Partial) if buf.len() >= MAX_TRAILERS => {
            return Err(H1Error::Chunk("trailers too large"));
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(H1Error::Chunk("invalid trailers")),
    };
    if !buf[..len].ends_with(b"\r\n\r\n") {
        return Err(H1Error::Chunk("bare lf"));
    }
    let mut map = HeaderMap::new();
    for field in &fields[..count] {
        let name = HeaderName::from_bytes(field.name.as_bytes()).map_err(|_| H1Error::Chunk("trailer name"))?;
        let value = HeaderValue::from_bytes(field.value).map_err(|_| H1Error::Chunk("trailer value"))?;
        map.append(name, value);
    }
    buf.advance(len);
    Ok(Some(map))
}
