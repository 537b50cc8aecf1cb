//! One client connection: our HTTP/1.1 loop first (see http1/), then, if it hands over,
//! hyper's auto (HTTP/1.1 or HTTP/2) server, each raced against the watchdog and the drain signal.

use std::{
    convert::Infallible,
    future::Future,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use http::{Request, Response};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
    sync::watch,
};
use tokio_rustls::TlsAcceptor;
use tracing::debug;

use super::{
    CLOSE_GRACE, ConnInfo, PING_WAIT, ServerOptions, builder,
    gate::Gated,
    http1::{self, Ended},
    limits::ConnPermit,
    metrics::{CloseReason, ServerMetrics},
    streams::streams,
    watchdog::{ConnActivity, Expiry, Timeouts, Tracked, TrackedBody},
};
use crate::{body::ClientBody, response_body::ResponseBody};

/// One accepted connection, from its first byte to its close.
pub(super) struct ConnTask {
    pub(super) options: Arc<ServerOptions>,
    pub(super) timeouts: Timeouts,
    pub(super) metrics: ServerMetrics,
    pub(super) drain: watch::Receiver<bool>,
    pub(super) peer: SocketAddr,
    /// Holds the connection's slot in `--max-connections` until the task ends.
    pub(super) _permit: ConnPermit,
}

impl ConnTask {
    /// `http1_first`: the client may speak HTTP/1.1 (no ALPN `h2`), so our own loop reads
    /// first and hands the connection to hyper only when it meets a request it does not take.
    pub(super) async fn run<S, H, Fut>(mut self, stream: S, info: ConnInfo, handler: H, http1_first: bool)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        H: Fn(Request<ClientBody>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
    {
        let activity = ConnActivity::new();
        let mut io = Tracked::new(stream, activity.clone());
        let mut http1_only = false;
        if http1_first {
            match self.serve_http1(io, &activity, &handler, info).await {
                Some(Ended::HandOver { io: rest, read, served }) => {
                    io = rest;
                    io.unread(read);
                    http1_only = served;
                }
                Some(Ended::Closed) | None => return,
            }
        }
        self.serve_hyper(io, activity, handler, info, http1_only).await;
    }

    /// Our HTTP/1.1 loop (see http1/), raced against the watchdog and the drain signal;
    /// `None` when the connection ended here.
    async fn serve_http1<S, H, Fut>(
        &mut self,
        io: Tracked<S>,
        activity: &Arc<ConnActivity>,
        handler: &H,
        info: ConnInfo,
    ) -> Option<Ended<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
        H: Fn(Request<ClientBody>, ConnInfo) -> Fut,
        Fut: Future<Output = Response<ResponseBody>>,
    {
        let draining = AtomicBool::new(false);
        let serving = http1::Loop {
            handler,
            info,
            activity,
            max_head: self.options.max_head(),
            draining: &draining,
        }
        .serve(io);
        tokio::pin!(serving);
        let peer = self.peer;
        let (timeouts, drain) = (self.timeouts, &mut self.drain);
        let mut watch = timers_or_drain(activity, timeouts, drain);
        let expiry = loop {
            tokio::select! {
                biased;
                ended = serving.as_mut() => {
                    return match ended {
                        Ok(ended) => Some(ended),
                        Err(error) => {
                            debug!(%error, client.addr = %peer, "Connection closed with error");
                            None
                        }
                    };
                }
                event = &mut watch => match event {
                    Watch::Expired(expiry) => break expiry,
                    Watch::Drain => {
                        let now = activity.snapshot();
                        // Between requests with nothing read: nothing to finish. (Pipelined bytes
                        // read during the last response are dropped, as hyper drops them.)
                        if now.in_flight == 0 && now.read_since_idle.is_none() {
                            return None;
                        }
                        draining.store(true, Ordering::Release);
                        watch = timers_only(activity, timeouts);
                    }
                },
            }
        };
        let reason = match expiry {
            Expiry::Header => CloseReason::HeaderTimeout,
            Expiry::Idle => CloseReason::IdleTimeout,
        };
        self.metrics.closed(reason);
        debug!(client.addr = %peer, reason = reason.as_str(), "Closing connection");
        if expiry == Expiry::Header {
            // The loop's next read answers a started head with 408 and ends it.
            activity.kill();
            let _ = tokio::time::timeout(CLOSE_GRACE, serving).await;
        }
        None
    }

    async fn serve_hyper<S, H, Fut>(
        mut self,
        stream: S,
        activity: Arc<ConnActivity>,
        handler: H,
        info: ConnInfo,
        http1_only: bool,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        H: Fn(Request<ClientBody>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
    {
        let counted = activity.clone();
        let service = service_fn(move |req: Request<Incoming>| {
            let in_flight = counted.request_started(req.version());
            let response = handler(req.map(ClientBody::Hyper), info);
            async move { Ok::<_, Infallible>(response.await.map(|body| TrackedBody::new(body, in_flight))) }
        });
        let io = TokioIo::new(stream);
        // HTTP/2 streams run in this task, driven with the connection (see streams.rs).
        let (executor, mut streams) = streams();
        let mut builder = builder(&self.options, executor);
        if http1_only {
            builder = builder.http1_only();
        }
        let connection = builder.serve_connection_with_upgrades(io, service);
        tokio::pin!(connection);
        let peer = self.peer;
        let (timeouts, drain) = (self.timeouts, &mut self.drain);
        let mut watch = timers_or_drain(&activity, timeouts, drain);
        let expiry = loop {
            tokio::select! {
                biased;
                result = streams.drive(connection.as_mut()) => {
                    if let Err(error) = result {
                        debug!(%error, client.addr = %peer, "Connection closed with error");
                    }
                    return;
                }
                event = &mut watch => match event {
                    Watch::Expired(expiry) => break expiry,
                    Watch::Drain => {
                        connection.as_mut().graceful_shutdown();
                        watch = timers_only(&activity, timeouts);
                    }
                },
            }
        };
        let reason = match expiry {
            Expiry::Header => CloseReason::HeaderTimeout,
            Expiry::Idle => CloseReason::IdleTimeout,
        };
        self.metrics.closed(reason);
        debug!(client.addr = %peer, reason = reason.as_str(), "Closing connection");
        let h2 = expiry == Expiry::Header && activity.maybe_h2();
        if expiry == Expiry::Idle || h2 {
            // HTTP/2: GOAWAY first, so the client learns why.
            connection.as_mut().graceful_shutdown();
        }
        if expiry == Expiry::Header {
            // hyper's graceful shutdown waits for the client's answer to its PING: a client that
            // answers at once is closed cleanly (its answer read, not reset); a silent one, or a
            // half-sent head, is ended at the I/O, which also answers an HTTP/1.1 head with 408.
            let answered = tokio::time::timeout(PING_WAIT, streams.drive(connection.as_mut()));
            if h2 && answered.await.is_ok() {
                return;
            }
            activity.kill();
        }
        let _ = tokio::time::timeout(CLOSE_GRACE, streams.drive(connection)).await;
    }
}

/// The watchdog's deadline or the drain signal, whichever comes first. Gated: polled only when
/// its timer or the drain signal fires, not on every wake-up the connection's I/O gives the task
/// (see gate.rs).
fn timers_or_drain<'a>(
    activity: &'a ConnActivity,
    timeouts: Timeouts,
    drain: &'a mut watch::Receiver<bool>,
) -> Gated<'a, Watch> {
    Gated::new(async move {
        tokio::select! {
            expiry = activity.expired(&timeouts) => Watch::Expired(expiry),
            _ = drain.wait_for(|drain| *drain) => Watch::Drain,
        }
    })
}

/// The watchdog's deadline alone, once draining has begun.
fn timers_only(activity: &ConnActivity, timeouts: Timeouts) -> Gated<'_, Watch> {
    Gated::new(async move { Watch::Expired(activity.expired(&timeouts).await) })
}

/// What ends the wait beside the connection itself.
enum Watch {
    Expired(Expiry),
    Drain,
}

/// The TLS stream, or whether the handshake timed out (`true`) or failed.
pub(super) async fn handshake(
    tls: &TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
    timeout: Duration,
) -> Result<tokio_rustls::server::TlsStream<TcpStream>, bool> {
    match tokio::time::timeout(timeout, tls.accept(stream)).await {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(error)) => {
            debug!(%error, client.addr = %peer, "TLS handshake failed");
            Err(false)
        }
        Err(_) => {
            debug!(client.addr = %peer, "TLS handshake timed out");
            Err(true)
        }
    }
}
