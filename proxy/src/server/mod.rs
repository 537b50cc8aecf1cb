//! Accept loops for the proxy and admin listeners: HTTP/1.1 and h2c prior knowledge on the
//! plain port; on the TLS port a rustls handshake first, then HTTP/1.1 or HTTP/2 by ALPN.
//! An extra Gateway port takes either, by the connection's first byte (`sniff.rs`). Upgrades
//! allowed, graceful drain on shutdown.
//!
//! ```text
//! accept ─▶ ConnLimit (full: close) ─▶ [TLS handshake] ─▶ our HTTP/1.1 loop ─(hand over)─▶ hyper auto (h1 | h2)
//!                                                             ▲ over Tracked I/O; watchdog: header / idle timeout
//! ```

mod conn;
mod gate;
pub mod http1;
pub mod limits;
pub mod metrics;
mod sniff;
mod streams;
pub mod tunnel;
pub mod watchdog;

use std::{future::Future, io, net::SocketAddr, sync::Arc, time::Duration};

use http::{Request, Response};
use hyper_util::{rt::TokioTimer, server::conn::auto};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::watch,
};
use tokio_rustls::TlsAcceptor;
use tracing::{debug, info, warn};

pub use self::sniff::Security;
use self::tunnel::Tunnels;
use self::{
    conn::{ConnTask, handshake},
    limits::{ConnLimit, accept_backoff},
    metrics::{CloseReason, ServerMetrics},
    watchdog::Timeouts,
};
use crate::{body::ClientBody, response_body::ResponseBody, spec::defaults};

/// After a timeout, how long a connection gets to send its GOAWAY or 408 before it is dropped;
/// also how long tunnels get to close after the drain deadline.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// How long a client past its header timeout has to answer the GOAWAY's PING for a clean close.
const PING_WAIT: Duration = Duration::from_millis(250);

/// The connection a request arrived on.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    /// The caller: the connection's peer, or (from `route` on) the address a route's realip
    /// rule found in the request (port 0).
    pub peer: SocketAddr,
    pub tls: bool,
    /// The extra listener (`--gateway-port`) it arrived on, by its Gateway port; `None` on the
    /// HTTP and HTTPS listeners.
    pub port: Option<u16>,
    /// The connection's peer when a realip rule replaced `peer` (nginx's `$realip_remote_addr`).
    pub via: Option<std::net::IpAddr>,
}

#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Request head size limit; larger heads get 431 (HTTP/1.1) or a stream error (HTTP/2).
    pub max_header_size: usize,
    /// How long in-flight requests (and open tunnels) may take to finish once shutdown begins.
    pub drain_timeout: Duration,
    /// A client that has not finished its TLS handshake by then is dropped.
    pub handshake_timeout: Duration,
    /// From accept (or the end of the TLS handshake) to a complete first request head, and from
    /// the first byte of each later HTTP/1.1 head to its end; covers protocol detection.
    pub header_timeout: Duration,
    /// A connection with no request in flight for this long is closed (HTTP/2: GOAWAY).
    pub idle_timeout: Duration,
    /// Open client connections per process, all listeners and workers together.
    pub max_connections: usize,
    pub http2_max_concurrent_streams: u32,
    /// HTTP/2 PING interval; a peer that does not answer within `http2_keep_alive_timeout` is dropped.
    pub http2_keep_alive_interval: Duration,
    pub http2_keep_alive_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_header_size: defaults::MAX_HEADER_SIZE as usize,
            drain_timeout: defaults::DRAIN_TIMEOUT,
            handshake_timeout: defaults::HANDSHAKE_TIMEOUT,
            header_timeout: defaults::CLIENT_HEADER_TIMEOUT,
            idle_timeout: defaults::CLIENT_IDLE_TIMEOUT,
            max_connections: defaults::MAX_CONNECTIONS as usize,
            http2_max_concurrent_streams: defaults::HTTP2_MAX_CONCURRENT_STREAMS,
            http2_keep_alive_interval: defaults::HTTP2_KEEP_ALIVE_INTERVAL,
            http2_keep_alive_timeout: defaults::HTTP2_KEEP_ALIVE_TIMEOUT,
        }
    }
}

impl ServerOptions {
    /// The most a request head may take: `max_header_size`, but at least hyper's smallest buffer.
    fn max_head(&self) -> usize {
        self.max_header_size.max(8192)
    }

    fn timeouts(&self) -> Timeouts {
        Timeouts {
            header: self.header_timeout,
            idle: self.idle_timeout,
        }
    }
}

/// The connections of a process, across all its listeners and workers: their budget (and
/// metrics) and the tunnels upgraded ones became. Shared by every `serve` of the process.
#[derive(Clone, Debug)]
pub struct Connections {
    pub limit: ConnLimit,
    pub tunnels: Tunnels,
}

impl Connections {
    pub fn new(options: &ServerOptions, metrics: ServerMetrics, tunnels: Tunnels) -> Self {
        Connections {
            limit: ConnLimit::new(options.max_connections, metrics),
            tunnels,
        }
    }

    fn metrics(&self) -> &ServerMetrics {
        self.limit.metrics()
    }
}

impl Default for Connections {
    fn default() -> Self {
        Connections::new(&ServerOptions::default(), ServerMetrics::default(), Tunnels::default())
    }
}

/// One connection's hyper server; `executor` runs its HTTP/2 streams (see streams.rs).
fn builder<E>(options: &ServerOptions, executor: E) -> auto::Builder<E> {
    let mut builder = auto::Builder::new(executor);
    builder
        .http1()
        .timer(TokioTimer::new())
        // Off: hyper's timer also runs while a keep-alive connection waits for its next request,
        // which is the idle timeout's job. The watchdog covers both (see watchdog.rs).
        .header_read_timeout(None)
        .max_buf_size(options.max_head());
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(options.max_header_size).unwrap_or(u32::MAX))
        .max_concurrent_streams(options.http2_max_concurrent_streams)
        // Rapid reset (CVE-2023-44487): streams the client resets before we accept them count
        // against this, beyond it the connection gets GOAWAY(ENHANCE_YOUR_CALM). h2's default,
        // set explicitly so it cannot silently go away. Likewise for streams we reset because
        // the client misbehaved (MadeYouReset).
        .max_pending_accept_reset_streams(20)
        .max_local_error_reset_streams(1024)
        .keep_alive_interval(options.http2_keep_alive_interval)
        .keep_alive_timeout(options.http2_keep_alive_timeout);
    builder
}

/// Serves connections from `listener` with `handler` (secured as `tls` says) until
/// `shutdown` resolves, then stops accepting and lets open connections (and tunnels) finish for
/// up to `drain_timeout`.
pub async fn serve<H, Fut>(
    listener: TcpListener,
    options: &ServerOptions,
    connections: &Connections,
    tls: impl Into<Security>,
    handler: H,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    H: Fn(Request<ClientBody>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
{
    let local = listener.local_addr()?;
    let tls = tls.into();
    let conn_options = Arc::new(options.clone());
    // Connection tasks hold receivers: `drain.closed()` resolves when the last one ends.
    let drain = watch::Sender::new(false);
    let mut failures = 0u32;
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    failures = 0;
                    accepted
                }
                Err(error) => {
                    // Out of file descriptors and friends: back off instead of spinning.
                    failures = failures.saturating_add(1);
                    connections.metrics().accept_errors.inc();
                    warn!(%error, listener.addr = %local, "Accept failed");
                    tokio::time::sleep(accept_backoff(failures)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        accepted(stream, peer, &conn_options, connections, &drain, &tls, &handler);
    }
    drop(listener);
    drain_connections(local, options, connections, drain).await;
    Ok(())
}

/// Starts the task of a connection just accepted, or closes it when the budget is spent.
fn accepted<H, Fut>(
    stream: TcpStream,
    peer: SocketAddr,
    options: &Arc<ServerOptions>,
    connections: &Connections,
    drain: &watch::Sender<bool>,
    tls: &Security,
    handler: &H,
) where
    H: Fn(Request<ClientBody>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
{
    let Some(permit) = connections.limit.try_acquire() else {
        debug!(client.addr = %peer, "Connection limit reached, closing");
        drop(stream);
        return;
    };
    let _ = stream.set_nodelay(true);
    let task = ConnTask {
        options: options.clone(),
        timeouts: options.timeouts(),
        metrics: connections.metrics().clone(),
        drain: drain.subscribe(),
        peer,
        _permit: permit,
    };
    let handler = handler.clone();
    let info = ConnInfo {
        peer,
        tls: false,
        port: None,
        via: None,
    };
    match tls {
        Security::Plain => {
            tokio::spawn(task.run(stream, info, handler, true));
        }
        Security::Tls(tls) => {
            // The handshake runs in the connection's task so a slow client never stalls accepting.
            tokio::spawn(secured(tls.clone(), stream, info, task, handler));
        }
        Security::Either(tls) => {
            let tls = tls.clone();
            tokio::spawn(async move {
                // The wait for the first byte is part of the handshake's time.
                match sniff::opens_tls(&stream, task.options.handshake_timeout).await {
                    Some(true) => secured(tls, stream, info, task, handler).await,
                    Some(false) => task.run(stream, info, handler, true).await,
                    None => {}
                }
            });
        }
    }
}

/// A TLS connection's handshake, then its requests.
async fn secured<H, Fut>(tls: TlsAcceptor, stream: TcpStream, info: ConnInfo, task: ConnTask, handler: H)
where
    H: Fn(Request<ClientBody>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
{
    match handshake(&tls, stream, info.peer, task.options.handshake_timeout).await {
        Ok(stream) => {
            let http1_first = stream.get_ref().1.alpn_protocol() != Some(b"h2");
            task.run(stream, ConnInfo { tls: true, ..info }, handler, http1_first)
                .await
        }
        Err(timed_out) => {
            if timed_out {
                task.metrics.closed(CloseReason::HandshakeTimeout);
            }
        }
    }
}

/// Lets open connections (and tunnels) finish for up to `drain_timeout`, then closes tunnels.
async fn drain_connections(
    local: SocketAddr,
    options: &ServerOptions,
    connections: &Connections,
    drain: watch::Sender<bool>,
) {
    info!(listener.addr = %local, drain_timeout = ?options.drain_timeout, "Draining connections");
    drain.send_replace(true);
    let drained = async {
        drain.closed().await;
        connections.tunnels.all_closed().await;
    };
    match tokio::time::timeout(options.drain_timeout, drained).await {
        Ok(()) => debug!(listener.addr = %local, "All connections closed"),
        Err(_) => {
            warn!(
                listener.addr = %local,
                tunnels = connections.tunnels.open(),
                "Drain timeout reached, closing remaining connections and tunnels"
            );
            connections.tunnels.close_all();
            let _ = tokio::time::timeout(CLOSE_GRACE, connections.tunnels.all_closed()).await;
        }
    }
}

/// Binds a non-blocking std listener (for sharing between worker runtimes with `try_clone`),
/// naming the address in the error.
pub fn bind_std(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let named = |error: io::Error| io::Error::new(error.kind(), format!("binding {addr}: {error}"));
    let listener = std::net::TcpListener::bind(addr).map_err(named)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Binds a listener, naming the address in the error.
pub async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|error| io::Error::new(error.kind(), format!("binding {addr}: {error}")))
}
