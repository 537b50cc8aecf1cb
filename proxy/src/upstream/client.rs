//! Connections to pods: HTTP/1.1 (cleartext or TLS) through hyper-util's pool (keyed by
//! scheme and `ip:port`), h2c through one multiplexed connection per pod.

use std::{net::SocketAddr, time::Duration};

use http::{Request, Response, Uri};
use hyper::body::Incoming;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};

use super::{UpstreamError, h2::H2Connections};
use crate::{body::RequestBody, routes::spec::UpstreamProtocol};

type HttpClient = Client<HttpConnector, RequestBody>;
type HttpsClient = Client<HttpsConnector<HttpConnector>, RequestBody>;

#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub connect_timeout: Duration,
    /// Below the idle timeouts of common backends (Node.js closes after 5 s, gunicorn after
    /// 2 s is its own problem), so we drop an idle connection before the pod does.
    pub pool_idle_timeout: Duration,
    pub pool_max_idle_per_endpoint: usize,
    /// For `appProtocol: https` backends: see [`crate::tls::client_config`].
    pub tls: rustls::ClientConfig,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(5),
            pool_idle_timeout: Duration::from_secs(4),
            pool_max_idle_per_endpoint: 256,
            tls: crate::tls::client_config(rustls::RootCertStore::empty()),
        }
    }
}

/// The clients every request shares; cheap to clone.
#[derive(Clone)]
pub struct UpstreamClients {
    http1: HttpClient,
    https: HttpsClient,
    h2c: H2Connections,
}

impl UpstreamClients {
    pub fn new(options: &ClientOptions) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(options.connect_timeout));
        connector.set_keepalive(Some(Duration::from_secs(30)));
        let mut builder = Client::builder(TokioExecutor::new());
        builder
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .pool_idle_timeout(options.pool_idle_timeout)
            .pool_max_idle_per_host(options.pool_max_idle_per_endpoint)
            // We set Host ourselves: the pool key is the pod address, the Host stays the caller's.
            .set_host(false);
        let http1 = builder.build(connector.clone());
        // The inner connector must accept `https://` URIs: `wrap_connector` (unlike hyper-rustls'
        // own build path) leaves HttpConnector's http-only check on.
        let mut tcp_for_tls = connector.clone();
        tcp_for_tls.enforce_http(false);
        // HTTP/1.1 only: upgrades (WebSocket) need it, and pods rarely gain from h2 behind us.
        let tls = HttpsConnectorBuilder::new()
            .with_tls_config(options.tls.clone())
            .https_only()
            .enable_http1()
            .wrap_connector(tcp_for_tls);
        let https = builder.build(tls);
        UpstreamClients {
            http1,
            https,
            h2c: H2Connections::new(options.connect_timeout),
        }
    }

    /// Sends `req` to the pod at `addr`. For HTTP/1.1 the URI must name the pod (it is the pool
    /// key); for h2c it names the caller's host (it becomes `:authority`).
    pub async fn send(
        &self,
        protocol: UpstreamProtocol,
        addr: SocketAddr,
        req: Request<RequestBody>,
    ) -> Result<Response<Incoming>, UpstreamError> {
        let pooled = match protocol {
            UpstreamProtocol::Http1 => self.http1.request(req).await,
            UpstreamProtocol::Https => self.https.request(req).await,
            UpstreamProtocol::H2c => return self.h2c.send(addr, req).await,
        };
        pooled.map_err(|error| {
            if error.is_connect() {
                UpstreamError::Connect(error.into())
            } else {
                UpstreamError::Request(error.into())
            }
        })
    }

    /// The URI a request to `addr` carries for `protocol`; see [`Self::send`].
    pub fn request_uri(
        protocol: UpstreamProtocol,
        pod: &http::uri::Authority,
        host: &str,
        path: &http::uri::PathAndQuery,
    ) -> Uri {
        let build = |authority: &str| {
            Uri::builder()
                .scheme("http")
                .authority(authority)
                .path_and_query(path.clone())
                .build()
        };
        let pod_uri = || {
            let scheme = if protocol == UpstreamProtocol::Https {
                "https"
            } else {
                "http"
            };
            Uri::builder()
                .scheme(scheme)
                .authority(pod.clone())
                .path_and_query(path.clone())
                .build()
                .expect("scheme, pod address and path are each valid")
        };
        match protocol {
            UpstreamProtocol::Http1 | UpstreamProtocol::Https => pod_uri(),
            UpstreamProtocol::H2c => build(host).unwrap_or_else(|_| pod_uri()),
        }
    }
}
