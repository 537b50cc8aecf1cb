//! One client connection: hyper's auto (HTTP/1.1 or HTTP/2) server over the tracked stream,
//! raced against its watchdog and the drain signal.

use std::{convert::Infallible, future::Future, net::SocketAddr, sync::Arc, time::Duration};

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
    CLOSE_GRACE, ServerOptions, builder,
    gate::Gated,
    limits::ConnPermit,
    metrics::{CloseReason, ServerMetrics},
    streams::streams,
    watchdog::{ConnActivity, Expiry, Timeouts, Tracked, TrackedBody},
};
use crate::{body::ResponseBody, forward::ConnInfo};

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
    pub(super) async fn run<S, H, Fut>(mut self, stream: S, info: ConnInfo, handler: H)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        H: Fn(Request<Incoming>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
    {
        let activity = ConnActivity::new();
        let counted = activity.clone();
        let service = service_fn(move |req: Request<Incoming>| {
            let in_flight = counted.request_started(req.version());
            let response = handler(req, info);
            async move { Ok::<_, Infallible>(response.await.map(|body| TrackedBody::new(body, in_flight))) }
        });
        let io = TokioIo::new(Tracked::new(stream, activity.clone()));
        // HTTP/2 streams run in this task, driven with the connection (see streams.rs).
        let (executor, mut streams) = streams();
        let builder = builder(&self.options, executor);
        let connection = builder.serve_connection_with_upgrades(io, service);
        tokio::pin!(connection);
        let peer = self.peer;
        let (timeouts, drain) = (self.timeouts, &mut self.drain);
        // Gated: polled only when its timer or the drain signal fires, not on every wake-up
        // hyper's I/O gives this task (see gate.rs).
        let mut watch = Gated::new(async {
            tokio::select! {
                expiry = activity.expired(&timeouts) => Watch::Expired(expiry),
                _ = drain.wait_for(|drain| *drain) => Watch::Drain,
            }
        });
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
                        watch = Gated::new(async { Watch::Expired(activity.expired(&timeouts).await) });
                    }
                },
            }
        };
        let reason = match expiry {
            Expiry::Header => {
                // HTTP/2: GOAWAY first (queued by the graceful shutdown, written when the killed
                // read ends the session), so the client learns why. hyper's graceful shutdown
                // alone would wait for the client's PING reply and for a half-sent head: end
                // it at the I/O, which also answers an HTTP/1.1 head with 408.
                if activity.maybe_h2() {
                    connection.as_mut().graceful_shutdown();
                }
                activity.kill();
                CloseReason::HeaderTimeout
            }
            Expiry::Idle => {
                connection.as_mut().graceful_shutdown();
                CloseReason::IdleTimeout
            }
        };
        self.metrics.closed(reason);
        debug!(client.addr = %peer, reason = reason.as_str(), "Closing connection");
        let _ = tokio::time::timeout(CLOSE_GRACE, streams.drive(connection)).await;
    }
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
