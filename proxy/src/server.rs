//! Accept loops for the proxy and admin listeners: HTTP/1.1 and h2c prior knowledge on the
//! plain port; on the TLS port a rustls handshake first, then HTTP/1.1 or HTTP/2 by ALPN.
//! Upgrades allowed, graceful drain on shutdown.

use std::{convert::Infallible, future::Future, io, net::SocketAddr, time::Duration};

use http::{Request, Response};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto, graceful::GracefulShutdown},
};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tracing::{debug, info, warn};

use crate::{body::ResponseBody, forward::ConnInfo};

#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Request head size limit; larger heads get 431 (HTTP/1.1) or a stream error (HTTP/2).
    pub max_header_size: usize,
    /// How long in-flight requests may take to finish once shutdown begins.
    pub drain_timeout: Duration,
    /// A client that has not finished its TLS handshake by then is dropped.
    pub handshake_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_header_size: 32 * 1024,
            drain_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

/// Serves connections from `listener` with `handler` (over TLS when `tls` is set) until
/// `shutdown` resolves, then stops accepting and lets open connections finish for up to
/// `drain_timeout`.
pub async fn serve<H, Fut>(
    listener: TcpListener,
    options: &ServerOptions,
    tls: Option<TlsAcceptor>,
    handler: H,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    H: Fn(Request<Incoming>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<ResponseBody>> + Send + 'static,
{
    let local = listener.local_addr()?;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(30))
        .max_buf_size(options.max_header_size.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(options.max_header_size).unwrap_or(u32::MAX))
        .max_concurrent_streams(1024);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and friends: back off instead of spinning.
                    warn!(%error, listener.addr = %local, "Accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn = ConnInfo {
            peer,
            tls: tls.is_some(),
        };
        let handler = handler.clone();
        let service = service_fn(move |req| {
            let response = handler(req, conn);
            async move { Ok::<_, Infallible>(response.await) }
        });
        let Some(tls) = &tls else {
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                .into_owned();
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    debug!(%error, client.addr = %peer, "Connection closed with error");
                }
            });
            continue;
        };
        // The handshake runs in the connection's task so a slow client never stalls accepting.
        let (tls, builder, watcher) = (tls.clone(), builder.clone(), graceful.watcher());
        let handshake_timeout = options.handshake_timeout;
        tokio::spawn(async move {
            let Some(stream) = handshake(&tls, stream, peer, handshake_timeout).await else {
                return;
            };
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection.into_owned()).await {
                debug!(%error, client.addr = %peer, "Connection closed with error");
            }
        });
    }
    drop(listener);
    info!(listener.addr = %local, drain_timeout = ?options.drain_timeout, "Draining connections");
    match tokio::time::timeout(options.drain_timeout, graceful.shutdown()).await {
        Ok(()) => debug!(listener.addr = %local, "All connections closed"),
        Err(_) => warn!(listener.addr = %local, "Drain timeout reached, closing remaining connections"),
    }
    Ok(())
}

async fn handshake(
    tls: &TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
    timeout: Duration,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    match tokio::time::timeout(timeout, tls.accept(stream)).await {
        Ok(Ok(stream)) => Some(stream),
        Ok(Err(error)) => {
            debug!(%error, client.addr = %peer, "TLS handshake failed");
            None
        }
        Err(_) => {
            debug!(client.addr = %peer, "TLS handshake timed out");
            None
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
