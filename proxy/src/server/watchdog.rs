//! Per-connection timers: which deadline applies right now (first request head, next request
//! head, idle keep-alive), and the I/O wrapper that notices reads and can end a connection.
//!
//! ```text
//! accept ──header timeout──▶ first request ─▶ in flight (no timer here) ─▶ idle ──idle timeout──▶ close
//!                                                   ▲                        │ HTTP/1.1: a byte arrives
//!                                                   └──── request head ◀─────┘ ──header timeout──▶ 408, close
//! ```
//! HTTP/2 reads while idle (PING acks, SETTINGS) do not count as activity: only streams do.

use std::{
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll, ready},
    time::Duration,
};

use bytes::Bytes;
use http::Version;
use http_body::{Body, Frame, SizeHint};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::Instant,
};

/// The HTTP/2 connection preface (RFC 9113 §3.4).
pub(super) const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Written to an HTTP/1.1 client whose request head did not arrive in time.
const REQUEST_TIMEOUT: &[u8] = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

/// "No read since the connection went idle".
const NONE: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// `--client-header-timeout`.
    pub header: Duration,
    /// `--client-idle-timeout`.
    pub idle: Duration,
}

/// Which timer ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    Header,
    Idle,
}

/// What the deadline depends on; times are offsets from the connection's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub in_flight: usize,
    pub requests: u64,
    pub h2: bool,
    /// When the last request in flight finished.
    pub idle_since: Duration,
    /// The first read after `idle_since`, if any.
    pub read_since_idle: Option<Duration>,
}

/// The deadline (offset from the connection's start) and what expires then; `None` while a
/// request is in flight (the body and upstream timeouts cover that time).
pub fn next_deadline(s: &Snapshot, timeouts: &Timeouts) -> Option<(Duration, Expiry)> {
    if s.in_flight > 0 {
        return None;
    }
    if s.requests == 0 {
        return Some((timeouts.header, Expiry::Header));
    }
    match s.read_since_idle {
        Some(read) if !s.h2 => Some((read + timeouts.header, Expiry::Header)),
        _ => Some((s.idle_since + timeouts.idle, Expiry::Idle)),
    }
}

/// Shared by a connection's I/O, its requests and its watchdog.
#[derive(Debug)]
pub struct ConnActivity {
    origin: Instant,
    in_flight: AtomicUsize,
    requests: AtomicU64,
    h2: AtomicBool,
    idle_since_ms: AtomicU64,
    read_since_idle_ms: AtomicU64,
    /// Some bytes arrived, and they do not start an HTTP/2 preface.
    h1_bytes: AtomicBool,
    /// Set by the watchdog: the next read ends the connection.
    kill: AtomicBool,
}

/// One request in flight; dropped when its response is done (or abandoned).
#[derive(Debug)]
pub struct InFlight(Arc<ConnActivity>);

// === impl ConnActivity ===

impl ConnActivity {
    pub fn new() -> Arc<Self> {
        Arc::new(ConnActivity {
            origin: Instant::now(),
            in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            h2: AtomicBool::new(false),
            idle_since_ms: AtomicU64::new(0),
            read_since_idle_ms: AtomicU64::new(NONE),
            h1_bytes: AtomicBool::new(false),
            kill: AtomicBool::new(false),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    pub fn request_started(self: &Arc<Self>, version: Version) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.requests.fetch_add(1, Ordering::AcqRel);
        if version == Version::HTTP_2 {
            self.h2.store(true, Ordering::Release);
        }
        InFlight(self.clone())
    }

    fn on_read(&self, bytes: &[u8], first: bool) {
        if first {
            let n = bytes.len().min(H2_PREFACE.len());
            self.h1_bytes.store(bytes[..n] != H2_PREFACE[..n], Ordering::Release);
        }
        // Only the first read after going idle is stamped (the header deadline starts there);
        // the load keeps the clock read off every other read.
        if self.in_flight.load(Ordering::Acquire) == 0 && self.read_since_idle_ms.load(Ordering::Acquire) == NONE {
            let _ = self
                .read_since_idle_ms
                .compare_exchange(NONE, self.now_ms(), Ordering::AcqRel, Ordering::Acquire);
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        let read = self.read_since_idle_ms.load(Ordering::Acquire);
        Snapshot {
            in_flight: self.in_flight.load(Ordering::Acquire),
            requests: self.requests.load(Ordering::Acquire),
            h2: self.h2.load(Ordering::Acquire),
            idle_since: Duration::from_millis(self.idle_since_ms.load(Ordering::Acquire)),
            read_since_idle: (read != NONE).then(|| Duration::from_millis(read)),
        }
    }

    /// Resolves when the deadline that applies passes.
    ///
    /// Nothing wakes the watchdog when requests come and go: that would cost every request a
    /// wake-up of its connection's task and a timer re-registration. Instead it sleeps until the
    /// current deadline or one `horizon` from now, whichever is first, and then looks again.
    /// That is never late: whatever happens after a look (a request ends, a byte arrives) sets
    /// a deadline at least `horizon` after it, the shorter of the two timeouts.
    pub async fn expired(&self, timeouts: &Timeouts) -> Expiry {
        // Floored so zero timeouts cannot spin the connection's task; late by at most this.
        let horizon = timeouts.header.min(timeouts.idle).max(Duration::from_millis(1));
        let sleep = tokio::time::sleep_until(self.origin);
        tokio::pin!(sleep);
        loop {
            let now = Instant::now();
            let wake = match next_deadline(&self.snapshot(), timeouts) {
                Some((at, expiry)) => {
                    let at = self.origin + at;
                    if now >= at {
                        return expiry;
                    }
                    at.min(now + horizon)
                }
                None => now + horizon,
            };
            sleep.as_mut().reset(wake);
            sleep.as_mut().await;
        }
    }

    /// Makes the connection's next read see end-of-stream, answering 408 first when an
    /// HTTP/1.1 request head had started. The caller must poll the connection again.
    pub fn kill(&self) {
        self.kill.store(true, Ordering::Release);
    }

    /// Whether the client started the HTTP/2 preface (or has sent nothing yet): a timeout then
    /// owes it a GOAWAY, not a 408.
    pub fn maybe_h2(&self) -> bool {
        !self.h1_bytes.load(Ordering::Acquire)
    }

    fn owes_408(&self) -> bool {
        let s = self.snapshot();
        self.h1_bytes.load(Ordering::Acquire) && !s.h2 && (s.requests == 0 || s.read_since_idle.is_some())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let activity = &self.0;
        if activity.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            activity.idle_since_ms.store(activity.now_ms(), Ordering::Release);
            activity.read_since_idle_ms.store(NONE, Ordering::Release);
        }
    }
}

/// A client stream that reports reads to its [`ConnActivity`] and obeys [`ConnActivity::kill`].
#[derive(Debug)]
pub struct Tracked<S> {
    inner: S,
    activity: Arc<ConnActivity>,
    read_any: bool,
    answered: bool,
    /// Read before and handed back (see [`Tracked::unread`]): given out first.
    unread: Bytes,
}

impl<S> Tracked<S> {
    pub fn new(inner: S, activity: Arc<ConnActivity>) -> Self {
        Tracked {
            inner,
            activity,
            read_any: false,
            answered: false,
            unread: Bytes::new(),
        }
    }

    /// Hands back bytes read from this stream but not used, to be read again before the rest:
    /// how our HTTP/1.1 loop gives hyper a connection without losing what it read. They were
    /// noted as activity when first read.
    pub fn unread(&mut self, bytes: Bytes) {
        self.unread = bytes;
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.activity.kill.load(Ordering::Acquire) {
            if !this.answered && this.activity.owes_408() {
                // Best effort: the socket is about to close either way.
                let _ = Pin::new(&mut this.inner).poll_write(cx, REQUEST_TIMEOUT);
                let _ = Pin::new(&mut this.inner).poll_flush(cx);
            }
            this.answered = true;
            return Poll::Ready(Ok(()));
        }
        if !this.unread.is_empty() {
            let n = this.unread.len().min(buf.remaining());
            buf.put_slice(&this.unread.split_to(n));
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let read = &buf.filled()[before..];
        if !read.is_empty() {
            this.activity.on_read(read, !this.read_any);
            this.read_any = true;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tracked<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A response body that keeps its request counted as in flight until hyper is done with it.
pub struct TrackedBody<B> {
    body: B,
    _in_flight: InFlight,
}

impl<B> TrackedBody<B> {
    pub fn new(body: B, in_flight: InFlight) -> Self {
        TrackedBody {
            body,
            _in_flight: in_flight,
        }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for TrackedBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests;
