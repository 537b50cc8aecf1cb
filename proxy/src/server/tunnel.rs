//! Upgraded connections (WebSocket and other `Upgrade:` protocols): bytes copied both ways
//! until either side closes, nothing moves for `--tunnel-idle-timeout`, or the drain deadline.
//!
//! ```text
//! client ◀──copy_bidirectional──▶ upstream
//!        └ any read refreshes `last` ─▶ idle watch ─▶ close
//!          Tunnels::close_all (drain deadline) ──────▶ close
//! ```

use std::{
    fmt, io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll, ready},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::watch,
    time::Instant,
};
use tracing::debug;

use super::metrics::{CloseReason, ServerMetrics};

/// The open tunnels of a process; clones share them.
#[derive(Clone)]
pub struct Tunnels(Arc<Inner>);

struct Inner {
    idle_timeout: Duration,
    metrics: ServerMetrics,
    /// `true` once the drain deadline passed; every open tunnel holds a receiver.
    close: watch::Sender<bool>,
}

// === impl Tunnels ===

impl Tunnels {
    pub fn new(idle_timeout: Duration, metrics: ServerMetrics) -> Self {
        Tunnels(Arc::new(Inner {
            idle_timeout,
            metrics,
            close: watch::Sender::new(false),
        }))
    }

    pub fn open(&self) -> usize {
        self.0.close.receiver_count()
    }

    /// Closes every open tunnel (and any opened later): the drain deadline has passed.
    pub fn close_all(&self) {
        self.0.close.send_replace(true);
    }

    /// Resolves once no tunnel is open.
    pub async fn all_closed(&self) {
        self.0.close.closed().await;
    }

    /// Copies bytes both ways until one side closes, the idle timeout, or [`Tunnels::close_all`].
    pub async fn run<C, U>(&self, client: C, upstream: U, endpoint: SocketAddr)
    where
        C: AsyncRead + AsyncWrite + Unpin,
        U: AsyncRead + AsyncWrite + Unpin,
    {
        let inner = &*self.0;
        let mut close = inner.close.subscribe();
        inner.metrics.open_tunnels.inc();
        let last = Arc::new(AtomicU64::new(0));
        let origin = Instant::now();
        let mut client = Active::new(client, last.clone(), origin);
        let mut upstream = Active::new(upstream, last.clone(), origin);
        let closed_by = tokio::select! {
            copied = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {
                match copied {
                    Ok((up, down)) => debug!(%endpoint, bytes.up = up, bytes.down = down, "Tunnel closed"),
                    Err(error) => debug!(%error, %endpoint, "Tunnel failed"),
                }
                None
            }
            () = idle(&last, origin, inner.idle_timeout) => Some(CloseReason::TunnelIdle),
            _ = close.wait_for(|close| *close) => Some(CloseReason::TunnelDrain),
        };
        if let Some(reason) = closed_by {
            inner.metrics.closed(reason);
            debug!(%endpoint, reason = reason.as_str(), "Tunnel closed by shunt");
        }
        inner.metrics.open_tunnels.dec();
    }
}

impl Default for Tunnels {
    fn default() -> Self {
        Tunnels::new(crate::spec::defaults::TUNNEL_IDLE_TIMEOUT, ServerMetrics::default())
    }
}

impl fmt::Debug for Tunnels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tunnels")
            .field("idle_timeout", &self.0.idle_timeout)
            .field("open", &self.open())
            .finish()
    }
}

/// Resolves once no byte moved for `timeout`; `last` is milliseconds since `origin`.
async fn idle(last: &AtomicU64, origin: Instant, timeout: Duration) {
    loop {
        let at = origin + Duration::from_millis(last.load(Ordering::Acquire)) + timeout;
        if Instant::now() >= at {
            return;
        }
        tokio::time::sleep_until(at).await;
    }
}

/// A stream that stamps `last` on every read that returned bytes.
struct Active<S> {
    inner: S,
    last: Arc<AtomicU64>,
    origin: Instant,
}

impl<S> Active<S> {
    fn new(inner: S, last: Arc<AtomicU64>, origin: Instant) -> Self {
        Active { inner, last, origin }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Active<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            let now = u64::try_from(this.origin.elapsed().as_millis()).unwrap_or(u64::MAX / 2);
            this.last.store(now, Ordering::Release);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Active<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    fn mk_tunnels(idle: Duration) -> Tunnels {
        Tunnels::new(idle, ServerMetrics::default())
    }

    #[tokio::test(start_paused = true)]
    async fn a_tunnel_closes_after_the_idle_timeout_and_not_while_bytes_flow() {
        let tunnels = mk_tunnels(Duration::from_secs(10));
        let (client, mut client_peer) = tokio::io::duplex(64);
        let (upstream, mut upstream_peer) = tokio::io::duplex(64);
        let endpoint = SocketAddr::from(([127, 0, 0, 1], 1));
        let running = tokio::spawn({
            let tunnels = tunnels.clone();
            async move { tunnels.run(client, upstream, endpoint).await }
        });
        let started = Instant::now();
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_secs(8)).await;
            client_peer.write_all(b"x").await.expect("write");
            let mut byte = [0u8; 1];
            upstream_peer.read_exact(&mut byte).await.expect("read");
        }
        assert_eq!(tunnels.open(), 1, "bytes every 8 s keep a 10 s tunnel open");
        running.await.expect("tunnel task");
        assert_eq!(started.elapsed(), Duration::from_secs(34));
        assert_eq!(tunnels.open(), 0);
        assert_eq!(tunnels.0.metrics.open_tunnels.get(), 0);
        let mut rest = Vec::new();
        upstream_peer
            .read_to_end(&mut rest)
            .await
            .expect("upstream side sees the close");
    }

    #[tokio::test(start_paused = true)]
    async fn close_all_ends_open_tunnels() {
        let tunnels = mk_tunnels(Duration::from_secs(3600));
        let (client, _client_peer) = tokio::io::duplex(64);
        let (upstream, _upstream_peer) = tokio::io::duplex(64);
        let running = tokio::spawn({
            let tunnels = tunnels.clone();
            async move {
                tunnels
                    .run(client, upstream, SocketAddr::from(([127, 0, 0, 1], 1)))
                    .await
            }
        });
        tokio::task::yield_now().await;
        assert_eq!(tunnels.0.metrics.open_tunnels.get(), 1);
        tunnels.close_all();
        tokio::time::timeout(Duration::from_secs(1), tunnels.all_closed())
            .await
            .expect("tunnels close at once");
        running.await.expect("tunnel task");
        assert_eq!(tunnels.0.metrics.open_tunnels.get(), 0);
    }
}
