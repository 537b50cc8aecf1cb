//! Our own HTTP/1.1 server loop, for the requests that make up nearly all internal traffic:
//! plain heads (see head.rs) with no body or a small one sent along. It reads a head, calls the
//! proxy, writes the response (head and first body bytes in one write), and goes on with the
//! next head on the connection.
//!
//! At the first head it does not take (an upgrade, `Expect`, a streamed or large body, a
//! malformed head, HTTP/1.0, an HTTP/2 preface) it hands the connection, with the bytes it has
//! read (given back to the stream: `Tracked::unread`), to hyper, which serves it from there to
//! its close. So hyper still answers every
//! unusual request as before; this loop only takes hyper's per-request cost off the common one.
//!
//! ```text
//! read ─▶ head::parse ─┬─ Request ─▶ handler ─▶ response::encode_head + body ─▶ next head
//!                      ├─ Partial ─▶ read more
//!                      └─ HandOver ─▶ hyper (conn.rs), from the first unserved byte
//! ```

pub mod head;
pub mod response;

use std::{
    future::{Future, poll_fn},
    io,
    mem::MaybeUninit,
    pin::{Pin, pin},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::Poll,
};

use bytes::{Buf, Bytes, BytesMut};
use futures::FutureExt;
use http::{Request, Response, Version};
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use self::{
    head::Parsed,
    response::{BodyFraming, BodyShape, encode_head},
};
use super::{
    ConnInfo,
    watchdog::{ConnActivity, H2_PREFACE, Tracked},
};
use crate::{
    body::ClientBody,
    h1::{encode_chunk, encode_last_chunk},
    response_body::ResponseBody,
};

/// Read buffer growth step, and the size of the write buffer kept between requests.
const CHUNK: usize = 8 * 1024;

/// Response bytes gathered before they are written.
const WRITE_AT: usize = 64 * 1024;

/// How the loop ended.
pub enum Ended<S> {
    Closed,
    /// Hyper's from here: `read` is what the loop read and did not serve, to be read first.
    HandOver {
        io: Tracked<S>,
        read: Bytes,
        /// Requests were served: the connection is HTTP/1.1, not a candidate for HTTP/2.
        served: bool,
    },
}

/// What the loop needs besides the connection.
pub struct Loop<'a, H> {
    pub handler: &'a H,
    pub info: ConnInfo,
    pub activity: &'a Arc<ConnActivity>,
    /// The most a request head may take (`--max-header-size`, at least 8 KiB as for hyper).
    pub max_head: usize,
    /// Set by the connection's task when the server drains: close after the current response.
    pub draining: &'a AtomicBool,
}

impl<H, Fut> Loop<'_, H>
where
    H: Fn(Request<ClientBody>, ConnInfo) -> Fut,
    Fut: Future<Output = Response<ResponseBody>>,
{
    pub async fn serve<S>(self, mut io: Tracked<S>) -> io::Result<Ended<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let mut buf = BytesMut::with_capacity(CHUNK);
        // Made at the first response: a connection that never sends a request holds only `buf`.
        let mut out = Vec::new();
        let mut served = false;
        loop {
            let parsed = loop {
                if !buf.is_empty() {
                    if !served && could_be_h2_preface(&buf) {
                        break None;
                    }
                    match head::parse(&buf, self.max_head) {
                        Parsed::Partial => {}
                        Parsed::HandOver => break None,
                        Parsed::Request {
                            request,
                            consumed,
                            close,
                        } => break Some((request, consumed, close)),
                    }
                }
                if buf.capacity() - buf.len() < CHUNK / 2 {
                    buf.reserve(CHUNK);
                }
                if io.read_buf(&mut buf).await? == 0 {
                    return Ok(Ended::Closed);
                }
            };
            let Some((request, consumed, asked_close)) = parsed else {
                return Ok(Ended::HandOver {
                    io,
                    read: buf.freeze(),
                    served,
                });
            };
            buf.advance(consumed);
            served = true;
            let in_flight = self.activity.request_started(Version::HTTP_11);
            let method = request.method().clone();
            let mut client = Client {
                io: &mut io,
                buf: &mut buf,
            };
            // A client that hangs up meanwhile drops the request (the pod's too, logged 499).
            let Some(response) = client.unless_gone((self.handler)(request, self.info)).await else {
                return Ok(Ended::Closed);
            };
            let close = asked_close || self.draining.load(Ordering::Acquire);
            if out.capacity() == 0 {
                out.reserve(CHUNK);
            }
            let keep_alive = write_response(&mut client, &mut out, response, &method, close).await?;
            drop(in_flight);
            // A drain that began while the response was written ends the connection too.
            if !keep_alive || self.draining.load(Ordering::Acquire) {
                let _ = io.shutdown().await;
                return Ok(Ended::Closed);
            }
            if out.capacity() > WRITE_AT {
                out = Vec::with_capacity(CHUNK);
            }
        }
    }
}

/// Whether the connection opened with (the start of) the HTTP/2 preface: h2c prior knowledge.
fn could_be_h2_preface(read: &[u8]) -> bool {
    let n = read.len().min(H2_PREFACE.len());
    read[..n] == H2_PREFACE[..n]
}

/// Whether a `Connection` value holds the `close` option.
fn names_close(value: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|token| token.trim_ascii().eq_ignore_ascii_case(b"close"))
}

/// The client's connection while a request is being answered.
struct Client<'a, S> {
    io: &'a mut Tracked<S>,
    /// Read but not served yet.
    buf: &'a mut BytesMut,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<'_, S> {
    /// Awaits `work` while watching the client, as hyper does: `None` when the client hung up
    /// (end of stream or an error) first, and `work` is dropped. Bytes it sends meanwhile (a
    /// pipelined request) are kept for the next parse; with such bytes read, like hyper, we
    /// read no more until they are served, so the buffer stays bounded.
    async fn unless_gone<F: Future>(&mut self, work: F) -> Option<F::Output> {
        let mut work = pin!(work);
        let mut watching = self.buf.is_empty();
        poll_fn(|cx| {
            if let Poll::Ready(output) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            if watching {
                let mut chunk = [MaybeUninit::uninit(); 1024];
                let mut read = ReadBuf::uninit(&mut chunk);
                match Pin::new(&mut *self.io).poll_read(cx, &mut read) {
                    Poll::Ready(Ok(())) if read.filled().is_empty() => return Poll::Ready(None),
                    Poll::Ready(Err(_)) => return Poll::Ready(None),
                    Poll::Ready(Ok(())) => {
                        self.buf.extend_from_slice(read.filled());
                        watching = false;
                    }
                    Poll::Pending => {}
                }
            }
            Poll::Pending
        })
        .await
    }
}

/// Writes one response; whether the connection may carry another.
async fn write_response<S>(
    client: &mut Client<'_, S>,
    out: &mut Vec<u8>,
    response: Response<ResponseBody>,
    method: &http::Method,
    close: bool,
) -> io::Result<bool>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (parts, mut body) = response.into_parts();
    out.clear();
    let written = encode_head(out, parts.status, &parts.headers, BodyShape::of(&body), method, close)
        .map_err(|_| io::Error::other("response content-length does not parse"))?;
    let length = match written.framing {
        BodyFraming::None => {
            client.io.write_all(out).await?;
            client.io.flush().await?;
            return Ok(!written.close);
        }
        BodyFraming::Length(length) => Some(length),
        BodyFraming::Chunked => None,
    };
    let mut sent = 0u64;
    loop {
        // A frame that is there already goes out with what is gathered (the head, at first);
        // before waiting for the next one, what is gathered is written.
        let frame = match body.frame().now_or_never() {
            Some(frame) => frame,
            None => {
                flush(client.io, out).await?;
                // A stream that goes quiet (events, long polls) ends when its client leaves.
                match client.unless_gone(body.frame()).await {
                    Some(frame) => frame,
                    None => return Err(io::ErrorKind::ConnectionAborted.into()),
                }
            }
        };
        let data = match frame {
            None => break,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                // Trailers: only for a client that sent `TE`, which hyper serves.
                Err(_) => continue,
            },
            Some(Err(error)) => {
                // The client sees the body cut short, as from hyper.
                let _ = flush(client.io, out).await;
                return Err(io::Error::other(error));
            }
        };
        sent += data.len() as u64;
        match length {
            Some(length) if sent > length => {
                return Err(io::Error::other("response body longer than its content-length"));
            }
            Some(_) => out.extend_from_slice(&data),
            None => encode_chunk(out, &data),
        }
        if out.len() >= WRITE_AT {
            client.io.write_all(out).await?;
            out.clear();
        }
    }
    match length {
        Some(length) if sent < length => {
            let _ = flush(client.io, out).await;
            return Err(io::Error::other("response body shorter than its content-length"));
        }
        Some(_) => {}
        None => encode_last_chunk(out, None),
    }
    flush(client.io, out).await?;
    Ok(!written.close)
}

async fn flush<S: AsyncWrite + Unpin>(io: &mut S, out: &mut Vec<u8>) -> io::Result<()> {
    if !out.is_empty() {
        io.write_all(out).await?;
        out.clear();
    }
    io.flush().await
}
