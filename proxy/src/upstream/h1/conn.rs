//! One HTTP/1.1 connection to a pod and the exchange of a request on it. Whoever holds the
//! connection polls its socket (the request's future, then the response body), so the socket's
//! own readiness is the only waker: no task, no channel.

use std::{
    future::{Future, poll_fn},
    io,
    ops::DerefMut,
    pin::{Pin, pin},
    task::{Context, Poll, Waker, ready},
    time::Duration,
};

use bytes::BytesMut;
use http::{Method, Response, StatusCode};
use http_body::Body as _;
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf},
    net::TcpStream,
    time::{Instant, Sleep},
};
use tokio_rustls::client::TlsStream;

use super::{
    H1Error,
    body::Body,
    encode::{Framing, encode_head, request_framing},
    parse::{Head, parse_head},
};
use crate::{
    body::RequestBody,
    h1::{encode_chunk, encode_last_chunk},
    headers::upgrade_protocol,
    upstream::{outgoing::Outgoing, pool::Poolable},
};

/// Room made in the read buffer before each read; the buffer is reused across requests.
const READ_CHUNK: usize = 8 * 1024;
/// Request body bytes buffered before they are written.
const WRITE_HIGH: usize = 64 * 1024;
/// A write buffer larger than this after an exchange is given back.
const SHRINK_ABOVE: usize = 16 * 1024;

/// The socket: plain TCP, or TLS to an `appProtocol: https` pod.
pub enum Stream {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// A connection to a pod, pooled between requests. It owns what counts it (the pool permit and
/// the open-connection gauge), so both go when the socket closes.
pub struct Http1 {
    pub(super) io: Stream,
    /// Bytes read and not yet used; empty between exchanges.
    pub(super) read_buf: BytesMut,
    write_buf: Vec<u8>,
    /// True only between exchanges that ended cleanly with keep-alive on both sides.
    pub(super) reusable: bool,
    /// The request was written whole (an early response may cut it short).
    pub(super) request_done: bool,
    /// Whether an exchange ran on it before: a reused connection may have been closed by the pod.
    used: bool,
    _counted: Box<dyn Send>,
}

/// What holds a connection during an exchange: the pool's handle, or a plain box in tests.
pub trait Hold: DerefMut<Target = Http1> + Send + Unpin + 'static {
    /// Takes the connection for good (an upgrade): it never goes back to a pool.
    fn detach(self) -> Http1;
}

impl Hold for Box<Http1> {
    fn detach(self) -> Http1 {
        *self
    }
}

// === impl Http1 ===

impl Http1 {
    /// `counted` lives as long as the connection: the pool permit and the gauge guard.
    pub fn new(io: Stream, counted: Box<dyn Send>) -> Self {
        Http1 {
            io,
            read_buf: BytesMut::with_capacity(READ_CHUNK),
            write_buf: Vec::with_capacity(1024),
            reusable: true,
            request_done: true,
            used: false,
            _counted: counted,
        }
    }

    /// Reads more into the read buffer: `Ok(0)` at EOF.
    pub(super) fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.read_buf.capacity() - self.read_buf.len() < READ_CHUNK {
            // Reclaims the buffer's own space when nothing else holds it (the usual case: the
            // head was copied out, the body's last bytes were sent to the client).
            self.read_buf.reserve(READ_CHUNK);
        }
        let read = pin!(self.io.read_buf(&mut self.read_buf));
        read.poll(cx)
    }

    /// Reads until a final response head (1xx skipped; 101 returned when `upgrade`).
    fn poll_head(&mut self, cx: &mut Context<'_>, head_request: bool, upgrade: bool) -> Poll<Result<Head, H1Error>> {
        loop {
            if !self.read_buf.is_empty()
                && let Some(head) = parse_head(&self.read_buf, head_request)?
            {
                let _ = self.read_buf.split_to(head.len);
                if head.status == StatusCode::SWITCHING_PROTOCOLS {
                    if !upgrade {
                        return Poll::Ready(Err(H1Error::UnexpectedSwitch));
                    }
                    return Poll::Ready(Ok(head));
                }
                if head.status.is_informational() {
                    // 100 Continue, 103 Early Hints: the final answer follows.
                    continue;
                }
                return Poll::Ready(Ok(head));
            }
            let empty = self.read_buf.is_empty();
            match ready!(self.poll_fill(cx)) {
                Ok(0) if empty => return Poll::Ready(Err(H1Error::ClosedBeforeResponse)),
                Ok(0) => return Poll::Ready(Err(H1Error::Truncated)),
                Ok(_) => {}
                // A reset before any response byte stays an io error: retry tells it by its kind.
                Err(error) => return Poll::Ready(Err(H1Error::Io(error))),
            }
        }
    }

    /// Writes out the write buffer: `Ready(Ok)` once it is all on the socket and flushed.
    fn poll_flush_buf(
        &mut self,
        cx: &mut Context<'_>,
        written: &mut usize,
        sent_any: &mut bool,
    ) -> Poll<Result<(), H1Error>> {
        while *written < self.write_buf.len() {
            let result = ready!(Pin::new(&mut self.io).poll_write(cx, &self.write_buf[*written..]));
            match result {
                Ok(0) => return Poll::Ready(Err(self.write_error(io::ErrorKind::WriteZero.into(), *sent_any))),
                Ok(n) => {
                    *written += n;
                    *sent_any = true;
                }
                Err(error) => return Poll::Ready(Err(self.write_error(error, *sent_any))),
            }
        }
        self.write_buf.clear();
        *written = 0;
        ready!(Pin::new(&mut self.io).poll_flush(cx)).map_err(H1Error::Io)?;
        Poll::Ready(Ok(()))
    }

    fn write_error(&self, error: io::Error, sent_any: bool) -> H1Error {
        if !sent_any && self.used {
            return H1Error::NotWritten(error);
        }
        H1Error::Io(error)
    }
}

impl Poolable for Http1 {
    fn is_open(&self) -> bool {
        self.reusable
    }

    fn poll_reusable(&mut self, _cx: &mut Context<'_>) -> Poll<bool> {
        Poll::Ready(self.reusable)
    }

    /// A peek without a task: the pod's FIN (or bytes it had no reason to send) since the
    /// connection went idle means it is closed. One read when the socket is marked readable,
    /// none otherwise.
    fn check_idle(&mut self) -> bool {
        if !self.reusable {
            return false;
        }
        let mut probe = [0u8; 1];
        let mut buf = ReadBuf::new(&mut probe);
        let mut cx = Context::from_waker(Waker::noop());
        let open = Pin::new(&mut self.io).poll_read(&mut cx, &mut buf).is_pending();
        self.reusable = open;
        open
    }
}

/// When [`send`] writes the request to the pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteAt {
    /// At once: the request was read together with others (an HTTP/2 connection's streams),
    /// whose writes follow it back to back anyway.
    Once,
    /// After the worker's other ready connections have read their requests (an HTTP/1 client's
    /// request, read alone), so that the writes to pods go out back to back: a pod's process is
    /// woken once per batch instead of once per request. Written at once, each write finds the
    /// pod's core idle again and pays a cross-core wake-up. HTTP/2 clients would lose by it:
    /// their streams already come in batches.
    AfterReadyConnections,
}

/// Sends `head` and `body` on `conn` and reads the response head. The body reads the rest and
/// gives the connection back (or closes it) when done. `head`'s URI is origin-form; its fields
/// are final (hop-by-hop stripped, `Host` set).
pub async fn send<C: Hold>(
    mut conn: C,
    head: &Outgoing<'_>,
    mut body: RequestBody,
    write_at: WriteAt,
    send_timeout: Option<Duration>,
) -> Result<Response<Body<C>>, H1Error> {
    let http1 = &mut *conn;
    // Until the body ends cleanly: dropped on any error or early, the connection closes.
    http1.reusable = false;
    http1.request_done = false;
    let framing = request_framing(head.headers, &body)?;
    let target = head.uri.path_and_query().map_or("/", |p| p.as_str());
    http1.write_buf.clear();
    encode_head(&mut http1.write_buf, head.method, target, head.fields(), framing);
    let head_request = head.method == Method::HEAD;
    let upgrade = upgrade_protocol(head.headers).is_some();

    if write_at == WriteAt::AfterReadyConnections {
        yield_to_ready_connections().await;
    }
    let mut sender = Sender {
        framing,
        sent: 0,
        written: 0,
        sent_any: false,
        body_done: framing == Framing::Empty,
        stall: send_timeout.map(WriteStall::new),
    };
    let early = poll_fn(|cx| sender.poll_send(http1, &mut body, cx, head_request, upgrade)).await?;
    http1.used = true;
    drop(body);
    // A large upload grew the buffer: an idle pooled connection should not keep that.
    if http1.write_buf.capacity() > SHRINK_ABOVE {
        http1.write_buf = Vec::new();
    }
    let head = match early {
        Some(head) => head,
        None => {
            http1.request_done = true;
            poll_fn(|cx| http1.poll_head(cx, head_request, upgrade)).await?
        }
    };
    let Head {
        status,
        version,
        headers,
        body: decoder,
        keep_alive,
        ..
    } = head;
    let mut response = Response::new(());
    *response.status_mut() = status;
    *response.version_mut() = version;
    *response.headers_mut() = headers;
    let body = if status == StatusCode::SWITCHING_PROTOCOLS {
        Body::switched(conn)
    } else {
        Body::new(conn, decoder, keep_alive)
    };
    Ok(response.map(|()| body))
}

/// Writes the head and the body; reads the response head meanwhile whenever writing waits.
struct Sender {
    framing: Framing,
    /// Body bytes taken so far (checked against a `Content-Length`).
    sent: u64,
    /// Bytes of the write buffer already on the socket.
    written: usize,
    sent_any: bool,
    body_done: bool,
    /// A route's send timeout: how long the socket may refuse more of the request.
    stall: Option<WriteStall>,
}

/// nginx's `proxy_send_timeout`: the longest wait for the socket to take more bytes, restarted
/// by each write that makes progress. The timer is made on the first wait only.
struct WriteStall {
    timeout: Duration,
    timer: Option<Pin<Box<Sleep>>>,
    armed: bool,
}

impl WriteStall {
    fn new(timeout: Duration) -> Self {
        WriteStall {
            timeout,
            timer: None,
            armed: false,
        }
    }

    /// The socket made progress: the next wait starts a new count.
    fn progressed(&mut self) {
        self.armed = false;
    }

    /// The socket waits: `Ready` once it has waited `timeout` since the last progress.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = Instant::now() + self.timeout;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !self.armed {
            timer.as_mut().reset(deadline);
            self.armed = true;
        }
        timer.as_mut().poll(cx)
    }
}

impl Sender {
    /// `Ready(Ok(None))`: all written, the head is next. `Ready(Ok(Some(head)))`: the pod answered
    /// before the body was all sent (an early 413 or 401); the rest is not sent.
    fn poll_send(
        &mut self,
        conn: &mut Http1,
        body: &mut RequestBody,
        cx: &mut Context<'_>,
        head_request: bool,
        upgrade: bool,
    ) -> Poll<Result<Option<Head>, H1Error>> {
        loop {
            let mut waiting = false;
            if !self.body_done && conn.write_buf.len() < WRITE_HIGH {
                match Pin::new(&mut *body).poll_frame(cx) {
                    Poll::Ready(Some(Ok(frame))) => {
                        self.take_frame(conn, frame)?;
                        continue;
                    }
                    Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(H1Error::RequestBody(error))),
                    Poll::Ready(None) => self.finish(conn, None)?,
                    Poll::Pending => waiting = true,
                }
            }
            if conn.write_buf.len() > self.written || self.body_done {
                let before = (self.written, conn.write_buf.len());
                match conn.poll_flush_buf(cx, &mut self.written, &mut self.sent_any) {
                    Poll::Ready(Ok(())) if self.body_done => return Poll::Ready(Ok(None)),
                    Poll::Ready(Ok(())) => {
                        self.stall.as_mut().map(WriteStall::progressed);
                        continue;
                    }
                    Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                    Poll::Pending => {
                        waiting = true;
                        if let Some(stall) = &mut self.stall {
                            if (self.written, conn.write_buf.len()) != before {
                                stall.progressed();
                            }
                            if stall.poll_expired(cx).is_ready() {
                                return Poll::Ready(Err(H1Error::SendTimeout(stall.timeout)));
                            }
                        }
                    }
                }
            }
            debug_assert!(waiting, "the loop continues until something waits");
            // Blocked on the body or the socket: the pod may have answered already.
            return match conn.poll_head(cx, head_request, upgrade) {
                Poll::Ready(Ok(head)) => Poll::Ready(Ok(Some(head))),
                // Whatever broke the read breaks the write too; the write's error is the one
                // that says whether anything went out.
                Poll::Ready(Err(H1Error::ClosedBeforeResponse)) | Poll::Pending => Poll::Pending,
                Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            };
        }
    }

    fn take_frame(&mut self, conn: &mut Http1, frame: http_body::Frame<bytes::Bytes>) -> Result<(), H1Error> {
        let frame = match frame.into_data() {
            Ok(data) if data.is_empty() => return Ok(()),
            Ok(data) => {
                self.sent += data.len() as u64;
                match self.framing {
                    Framing::Chunked => encode_chunk(&mut conn.write_buf, &data),
                    Framing::Length { length, .. } if self.sent <= length => conn.write_buf.extend_from_slice(&data),
                    Framing::Length { .. } | Framing::Empty => return Err(H1Error::RequestBodyLength),
                }
                return Ok(());
            }
            Err(frame) => frame,
        };
        if let Ok(trailers) = frame.into_trailers() {
            self.finish(conn, Some(&trailers))?;
        }
        Ok(())
    }

    /// The body ended (with trailers, or not).
    fn finish(&mut self, conn: &mut Http1, trailers: Option<&http::HeaderMap>) -> Result<(), H1Error> {
        if self.body_done {
            return Ok(());
        }
        self.body_done = true;
        match self.framing {
            Framing::Chunked => encode_last_chunk(&mut conn.write_buf, trailers),
            Framing::Length { length, .. } if self.sent != length => return Err(H1Error::RequestBodyLength),
            Framing::Length { .. } | Framing::Empty => {}
        }
        Ok(())
    }
}

// === impl Stream ===

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(&mut **tls).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => Pin::new(&mut **tls).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => Pin::new(&mut **tls).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(&mut **tls).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            Stream::Tls(tls) => Pin::new(&mut **tls).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(tcp) => tcp.is_write_vectored(),
            Stream::Tls(tls) => tls.is_write_vectored(),
        }
    }
}

/// Pending once, woken at once: the task goes to the back of the worker's run queue.
async fn yield_to_ready_connections() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests;
