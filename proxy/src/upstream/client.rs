//! Pooled connections to pods: one hyper-util client per protocol, pooled by `ip:port`.

use std::time::Duration;

use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};

use crate::{body::RequestBody, routes::spec::UpstreamProtocol};

pub type HttpClient = Client<HttpConnector, RequestBody>;

#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub connect_timeout: Duration,
    /// Below the idle timeouts of common backends (Node.js closes after 5 s, gunicorn after
    /// 2 s is its own problem), so we drop an idle connection before the pod does.
    pub pool_idle_timeout: Duration,
    pub pool_max_idle_per_endpoint: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(5),
            pool_idle_timeout: Duration::from_secs(4),
            pool_max_idle_per_endpoint: 256,
        }
    }
}

/// The clients every request shares; cheap to clone.
#[derive(Clone)]
pub struct UpstreamClients {
    http1: HttpClient,
    h2c: HttpClient,
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
        builder.http2_only(true).http2_keep_alive_interval(Some(Duration::from_secs(20)));
        let h2c = builder.build(connector);
        UpstreamClients { http1, h2c }
    }

    pub fn for_protocol(&self, protocol: UpstreamProtocol) -> &HttpClient {
        match protocol {
            UpstreamProtocol::Http1 => &self.http1,
            UpstreamProtocol::H2c => &self.h2c,
        }
    }
}
