//! The response body, read straight from the connection; and after a 101, the connection as
//! the upstream side of a tunnel.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::{Buf, Bytes};
use http_body::{Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{
    H1Error,
    conn::{Hold, Http1},
    framing::{Decoded, Decoder},
};

/// A response body from a pod. Holds the connection until the body ends: then it goes back to
/// the pool (clean end, keep-alive) or closes; dropped early, it closes.
pub struct Body<C: Hold> {
    /// `None` once the body ended or failed.
    conn: Option<C>,
    decoder: Decoder,
    /// Both sides allow another exchange, and the framing is not close-delimited.
    keep_alive: bool,
    /// A 101: no body; the connection is for [`Body::upgrade`].
    switched: bool,
}

/// An upgraded connection: what the pod sent past the 101's head, then the socket.
pub struct Upgraded {
    pre: Bytes,
    conn: Http1,
}

// === impl Body ===

impl<C: Hold> Body<C> {
    pub(super) fn new(conn: C, decoder: Decoder, keep_alive: bool) -> Self {
        let keep_alive = keep_alive && !decoder.is_close_delimited();
        let mut body = Body {
            conn: Some(conn),
            decoder,
            keep_alive,
            switched: false,
        };
        if body.decoder.is_done() {
            body.release();
        }
        body
    }

    pub(super) fn switched(conn: C) -> Self {
        Body {
            conn: Some(conn),
            decoder: Decoder::empty(),
            keep_alive: false,
            switched: true,
        }
    }

    /// After a 101 to a request that asked for it: the connection, out of the pool for good.
    pub fn upgrade(mut self) -> Option<Upgraded> {
        if !self.switched {
            return None;
        }
        let mut conn = self.conn.take()?.detach();
        let pre = conn.read_buf.split().freeze();
        Some(Upgraded { pre, conn })
    }

    /// The body ended: the connection goes back when it is fit for another request.
    fn release(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.reusable = self.keep_alive && conn.request_done && conn.read_buf.is_empty();
        }
    }

    fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<Result<Decoded, H1Error>> {
        let Some(conn) = self.conn.as_mut() else {
            return Poll::Ready(Ok(Decoded::End));
        };
        let mut eof = false;
        loop {
            match self.decoder.decode(&mut conn.read_buf, eof)? {
                Decoded::More => {}
                decoded => return Poll::Ready(Ok(decoded)),
            }
            match ready!(conn.poll_fill(cx)) {
                Ok(0) => eof = true,
                Ok(_) => {}
                Err(error) => return Poll::Ready(Err(H1Error::Io(error))),
            }
        }
    }
}

impl<C: Hold> http_body::Body for Body<C> {
    type Data = Bytes;
    type Error = H1Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, H1Error>>> {
        let this = self.get_mut();
        if this.switched {
            return Poll::Ready(None);
        }
        let step = ready!(this.poll_step(cx));
        if step.is_err() {
            // Closed, never reused: where the next message starts is unknown.
            this.conn = None;
        } else if this.decoder.is_done() {
            this.release();
        }
        Poll::Ready(match step {
            Ok(Decoded::Data(data)) => Some(Ok(Frame::data(data))),
            Ok(Decoded::Trailers(trailers)) => Some(Ok(Frame::trailers(trailers))),
            Ok(Decoded::End | Decoded::More) => None,
            Err(error) => Some(Err(error)),
        })
    }

    fn is_end_stream(&self) -> bool {
        self.switched || self.conn.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.decoder.remaining() {
            Some(left) => SizeHint::with_exact(left),
            None => SizeHint::default(),
        }
    }
}

// === impl Upgraded ===

impl AsyncRead for Upgraded {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.pre.is_empty() {
            let n = this.pre.len().min(buf.remaining());
            buf.put_slice(&this.pre[..n]);
            this.pre.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.conn.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Upgraded {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().conn.io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().conn.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().conn.io).poll_shutdown(cx)
    }
}
