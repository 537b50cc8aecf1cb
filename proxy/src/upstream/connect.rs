//! Dialing pods: TCP (no Nagle, keep-alive), TLS for `appProtocol: https`; for HTTP/2 pods the
//! handshake, with the connection's task spawned on the worker's runtime.

use std::{io, net::SocketAddr, sync::Arc, time::Duration};

use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use prometheus_client::metrics::gauge::Gauge;
use rustls::pki_types::ServerName;
use socket2::{SockRef, TcpKeepalive};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tracing::debug;

use super::{BoxError, h1::Stream};
use crate::body::RequestBody;

/// Counts one open connection on its backend's gauge until dropped.
pub struct OpenConnection(Gauge);

impl OpenConnection {
    pub fn new(gauge: Gauge) -> Self {
        gauge.inc();
        OpenConnection(gauge)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A TCP connection to `addr` with TCP_NODELAY (requests are written whole, so Nagle only
/// adds latency) and keep-alive probes (a pod that vanished without a FIN is noticed).
pub async fn tcp(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let keepalive = TcpKeepalive::new().with_time(Duration::from_secs(30));
    SockRef::from(&stream).set_tcp_keepalive(&keepalive)?;
    Ok(stream)
}

/// The TLS client for a dial, and the SNI name it sends (`None`: none, the pod's IP is dialed).
/// A `None` connector is a backend whose TLS setting could not be built: the dial fails.
pub type Dial<'a> = (Option<&'a TlsConnector>, Option<&'a ServerName<'static>>);

/// Opens the socket for an HTTP/1.1 connection (over TLS when `tls` is set); no task: the
/// exchanges on it poll it themselves (see `h1`).
pub async fn http1(addr: SocketAddr, tls: Option<Dial<'_>>) -> Result<Stream, BoxError> {
    let Some((connector, sni)) = tls else {
        return Ok(Stream::Tcp(tcp(addr).await?));
    };
    let connector = connector.ok_or(super::pod_tls::UnusableTls)?;
    let stream = tcp(addr).await?;
    // Pod certificates never name the pod IP; what is checked is the connector's verifier's
    // (`crate::tls::upstream`, `crate::tls::pod`), which ignores the name given here. An IP
    // name sends no SNI.
    let name = sni.cloned().unwrap_or_else(|| ServerName::from(addr.ip()));
    let stream = connector.connect(name, stream).await?;
    Ok(Stream::Tls(Box::new(stream)))
}

/// Opens an HTTP/2 connection, pinged so a dead pod is noticed: h2c (prior knowledge) without
/// `tls`, else over TLS once the pod has agreed `h2` by ALPN.
pub async fn h2<H: Send + 'static>(
    addr: SocketAddr,
    tls: Option<&TlsConnector>,
    hold: H,
) -> Result<http2::SendRequest<RequestBody>, BoxError> {
    let stream = tcp(addr).await?;
    match tls {
        None => handshake(addr, stream, hold).await,
        Some(connector) => {
            let stream = connector.connect(ServerName::from(addr.ip()), stream).await?;
            // A pod that did not agree h2 would read our preface as garbage (or wait for more):
            // fail the dial instead, which answers 502 like any failed connect.
            if stream.get_ref().1.alpn_protocol() != Some(b"h2") {
                return Err(NoH2.into());
            }
            handshake(addr, stream, hold).await
        }
    }
}

/// The pod's TLS server did not select `h2` by ALPN.
#[derive(Debug, thiserror::Error)]
#[error("the pod did not agree HTTP/2 (ALPN h2) over TLS")]
pub struct NoH2;

async fn handshake<S, H>(addr: SocketAddr, stream: S, hold: H) -> Result<http2::SendRequest<RequestBody>, BoxError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    H: Send + 'static,
{
    let (sender, connection) = http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(10))
        .handshake(TokioIo::new(stream))
        .await?;
    spawn(addr, connection, hold);
    Ok(sender)
}

/// The client config for TLS pods offering one ALPN protocol: `http/1.1` for HTTPS pods
/// (upgrades need it), `h2` for HTTP/2 ones.
pub fn tls_connector(config: &rustls::ClientConfig, alpn: &[u8]) -> TlsConnector {
    let mut config = config.clone();
    config.alpn_protocols = vec![alpn.to_vec()];
    TlsConnector::from(Arc::new(config))
}

fn spawn<F, H>(addr: SocketAddr, connection: F, hold: H)
where
    F: Future<Output = hyper::Result<()>> + Send + 'static,
    H: Send + 'static,
{
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            debug!(%error, endpoint = %addr, "Upstream connection closed");
        }
        drop(hold);
    });
}
