//! Our HTTP/1.1 client for pods: no task and no channel per connection; the request's future
//! writes the request and reads the response head, the response body reads the rest.
//!
//! ```text
//! send ─▶ encode head (+ body, chunked or by length) ─▶ parse head (1xx skipped) ─▶ Response<Body>
//!                                                                           │
//!         pool ◀─ body ended cleanly, keep-alive ◀─ framing decodes the rest ┘ (101: the tunnel takes the socket)
//! ```

mod body;
mod conn;
mod encode;
mod framing;
mod parse;

use std::io;

pub use self::{
    body::{Body, Upgraded},
    conn::{Hold, Http1, Stream, WriteAt, send},
    encode::{Framing, encode_head},
    parse::{MAX_HEAD, parse_head},
};

/// What went wrong on one HTTP/1.1 exchange with a pod.
#[derive(Debug, thiserror::Error)]
pub enum H1Error {
    /// Writing failed before any byte of the request went out: the pod cannot have seen it.
    #[error("connection closed before the request was written: {0}")]
    NotWritten(#[source] io::Error),
    /// The pod closed the connection without a byte of response (a reused connection it timed
    /// out as we wrote): it may have seen the request.
    #[error("connection closed before any response byte")]
    ClosedBeforeResponse,
    #[error("upstream i/o: {0}")]
    Io(#[source] io::Error),
    #[error("response head over {MAX_HEAD} bytes")]
    HeadTooLarge,
    #[error("invalid response head: {0}")]
    InvalidHead(#[source] httparse::Error),
    #[error("invalid response header {0}")]
    InvalidHeader(&'static str),
    #[error("invalid response framing: {0}")]
    Framing(&'static str),
    #[error("invalid chunked body: {0}")]
    Chunk(&'static str),
    #[error("connection closed mid-body")]
    Truncated,
    #[error("101 to a request that asked for no upgrade")]
    UnexpectedSwitch,
    #[error("request body: {0}")]
    RequestBody(#[source] crate::body::RequestBodyError),
    #[error("request body length differs from its content-length")]
    RequestBodyLength,
    #[error("invalid request content-length")]
    RequestContentLength,
    /// The pod took none of the request for this long (a route's send timeout).
    #[error("the pod took no request bytes for {0:?}")]
    SendTimeout(std::time::Duration),
}

#[cfg(test)]
mod tests;
