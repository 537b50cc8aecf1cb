//! Sending to pods: HTTP/1.1 (cleartext or TLS) through the worker's [`Pool`], HTTP/2
//! (cleartext or TLS) through one multiplexed connection per pod.

use std::{net::SocketAddr, time::Duration};

use http::{Response, Uri};
use tokio_rustls::TlsConnector;

use super::{
    Endpoint, Outgoing, Upstream, UpstreamBody, UpstreamError, connect,
    h1::{self, H1Error, Hold, Http1, WriteAt},
    h2::H2Connections,
    pool::{Checkout, Pool, PoolOptions, Pooled},
};
use crate::{
    body::RequestBody,
    spec::{UpstreamProtocol, UpstreamTimeouts, defaults},
};

#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Bounds connecting (TCP, TLS) and waiting for a free pooled connection.
    pub connect_timeout: Duration,
    /// Below the idle timeouts of common backends (Node.js closes after 5 s, gunicorn after
    /// 2 s is its own problem), so we drop an idle connection before the pod does.
    pub pool_idle_timeout: Duration,
    /// HTTP/1 connections per endpoint per worker, idle or busy. Must be at least 1.
    pub max_connections_per_endpoint: usize,
    /// For `appProtocol: https` backends: see [`crate::tls::client_config`].
    pub tls: rustls::ClientConfig,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: defaults::CONNECT_TIMEOUT,
            pool_idle_timeout: defaults::UPSTREAM_IDLE_TIMEOUT,
            max_connections_per_endpoint: defaults::UPSTREAM_MAX_CONNECTIONS as usize,
            tls: crate::tls::client_config(rustls::RootCertStore::empty()),
        }
    }
}

/// One worker's connections to pods; cheap to clone.
#[derive(Clone)]
pub struct UpstreamClients {
    http1: Pool<PoolKey, Http1>,
    /// External auth services' connections (see `auth.rs`).
    pub(super) auth: Pool<super::auth::AuthKey, Http1>,
    pub(super) tls: TlsConnector,
    /// The same TLS config as `tls`, offering `h2` by ALPN.
    h2_tls: TlsConnector,
    h2: H2Connections,
    connect_timeout: Duration,
}

/// HTTP/1 connections are pooled by pod address and by the TLS client that opened them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PoolKey {
    addr: SocketAddr,
    /// [`CLEARTEXT`], [`PLAIN_TLS`], or a backend's own client ([`super::PodTls::id`]).
    tls: u64,
}

const CLEARTEXT: u64 = 0;
/// The process's HTTPS client: encrypts, authenticates the pod only with `--upstream-ca-bundle`.
const PLAIN_TLS: u64 = 1;

/// A pooled HTTP/1 connection, held by the exchange and then by the response body.
pub type Lease = Pooled<PoolKey, Http1>;

impl Hold for Lease {
    fn detach(self) -> Http1 {
        Pooled::detach(self)
    }
}

impl UpstreamClients {
    pub fn new(options: &ClientOptions) -> Self {
        let pool = PoolOptions {
            max_per_endpoint: options.max_connections_per_endpoint.max(1),
            idle_timeout: options.pool_idle_timeout,
            wait_timeout: options.connect_timeout,
        };
        UpstreamClients {
            http1: Pool::new(pool),
            auth: Pool::new(pool),
            tls: connect::tls_connector(&options.tls, b"http/1.1"),
            h2_tls: connect::tls_connector(&options.tls, b"h2"),
            h2: H2Connections::default(),
            connect_timeout: options.connect_timeout,
        }
    }

    /// Sends `head` and `body` to `endpoint` of `upstream`. The URI is [`Self::request_uri`]'s.
    /// An HTTP/1 response body holds its pooled connection until it is done; `write_at` paces
    /// its write. `connect_timeout` is the route's, when it has one (else the client's).
    pub async fn send(
        &self,
        upstream: &Upstream,
        endpoint: &Endpoint,
        head: &Outgoing<'_>,
        body: RequestBody,
        write_at: WriteAt,
        timeouts: Option<UpstreamTimeouts>,
    ) -> Result<Response<UpstreamBody>, UpstreamError> {
        let connect_timeout = timeouts.map(|t| t.connect);
        let connect_timeout = connect_timeout.unwrap_or(self.connect_timeout);
        let tls = match upstream.protocol {
            UpstreamProtocol::Http1 => CLEARTEXT,
            UpstreamProtocol::AutoHttp if !head.client_tls => CLEARTEXT,
            UpstreamProtocol::Https | UpstreamProtocol::AutoHttp => {
                upstream.tls.as_ref().map_or(PLAIN_TLS, |pod| pod.id)
            }
            UpstreamProtocol::H2c | UpstreamProtocol::H2Tls => {
                let tls = (upstream.protocol == UpstreamProtocol::H2Tls).then_some(&self.h2_tls);
                // Boxed: the HTTP/2 exchange's future is the largest part of this one, which
                // every request to an HTTP/1 pod would otherwise carry and move.
                let exchange = self
                    .h2
                    .send(endpoint.addr, tls, &upstream.stats, head.to_h2(body), connect_timeout);
                let response = Box::pin(exchange).await?;
                return Ok(response.map(UpstreamBody::H2));
            }
        };
        let key = PoolKey {
            addr: endpoint.addr,
            tls,
        };
        let conn = match self.http1.checkout(&key).await {
            Ok(Checkout::Idle(conn)) => {
                upstream.stats.connection_reused();
                conn
            }
            Ok(Checkout::Connect(permit)) => {
                let counted = (permit, connect::OpenConnection::new(upstream.stats.connections()));
                let tls = match (tls, &upstream.tls) {
                    (CLEARTEXT, _) => None,
                    (_, Some(pod)) => Some((pod.connector.as_ref(), pod.sni.as_ref())),
                    (_, None) => Some((Some(&self.tls), None)),
                };
                // Boxed: dialing (TCP, TLS) is the rare case, and its future is the largest
                // part of this one, which every request would otherwise carry and move.
                let dial = Box::pin(connect::http1(key.addr, tls));
                let stream = match tokio::time::timeout(connect_timeout, dial).await {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(error)) => return Err(UpstreamError::Connect(error)),
                    Err(_) => return Err(UpstreamError::connect_timeout()),
                };
                upstream
                    .stats
                    .connection_opened(upstream.protocol.for_caller(head.client_tls));
                self.http1.pooled(key, Http1::new(stream, Box::new(counted)))
            }
            Err(timeout) => return Err(UpstreamError::PoolTimeout(timeout)),
        };
        let response = h1::send(conn, head, body, write_at, timeouts.map(|t| t.send)).await;
        let response = response.map_err(|error| match error {
            // A timeout as the head's is, so it is answered 504 and retried alike.
            H1Error::SendTimeout(timeout) => UpstreamError::Timeout(timeout),
            error => UpstreamError::Request(error.into()),
        })?;
        Ok(response.map(UpstreamBody::H1))
    }

    /// Open HTTP/1 connections to `addr` from this worker, for tests and benches.
    pub fn open_connections(&self, addr: SocketAddr, tls: bool) -> usize {
        let tls = if tls { PLAIN_TLS } else { CLEARTEXT };
        self.http1.open(&PoolKey { addr, tls })
    }

    /// The URI a request carries for `protocol`: origin-form (`/path?query`) on HTTP/1.1, where
    /// the `Host` header names the site; for HTTP/2 the caller's host (it becomes `:authority`),
    /// or the pod when the caller sent none, under the scheme the connection has.
    pub fn request_uri(protocol: UpstreamProtocol, pod: SocketAddr, host: &str, path: &http::uri::PathAndQuery) -> Uri {
        let scheme = if protocol == UpstreamProtocol::H2Tls {
            "https"
        } else {
            "http"
        };
        let absolute = |authority: &str| {
            Uri::builder()
                .scheme(scheme)
                .authority(authority)
                .path_and_query(path.clone())
                .build()
        };
        match protocol {
            UpstreamProtocol::Http1 | UpstreamProtocol::Https | UpstreamProtocol::AutoHttp => Uri::from(path.clone()),
            UpstreamProtocol::H2c | UpstreamProtocol::H2Tls => absolute(host)
                .or_else(|_| absolute(&pod.to_string()))
                .expect("scheme, pod address and path are each valid"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http2_request_names_the_callers_host_under_the_connections_scheme() {
        let pod: SocketAddr = "10.0.0.7:8443".parse().expect("an address");
        let path: http::uri::PathAndQuery = "/svc/Call?x=1".parse().expect("a path");
        let uri = |protocol| UpstreamClients::request_uri(protocol, pod, "grpc.example.com", &path).to_string();
        assert_eq!(uri(UpstreamProtocol::H2Tls), "https://grpc.example.com/svc/Call?x=1");
        assert_eq!(uri(UpstreamProtocol::H2c), "http://grpc.example.com/svc/Call?x=1");
        assert_eq!(uri(UpstreamProtocol::Https), "/svc/Call?x=1");
        let no_host = UpstreamClients::request_uri(UpstreamProtocol::H2Tls, pod, "", &path);
        assert_eq!(no_host.to_string(), "https://10.0.0.7:8443/svc/Call?x=1");
        let v6: SocketAddr = "[fd00::7]:8443".parse().expect("an address");
        let no_host = UpstreamClients::request_uri(UpstreamProtocol::H2c, v6, "", &path);
        assert_eq!(no_host.to_string(), "http://[fd00::7]:8443/svc/Call?x=1");
    }
}
