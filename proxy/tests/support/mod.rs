//! What the proxy tests share: a route table for one backend, the proxy in-process on loopback,
//! a client, and the request side of a raw backend. Each test file uses part of it.
#![allow(dead_code)]

use std::{collections::BTreeMap, net::SocketAddr, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper_util::{client::legacy::Client, rt::TokioExecutor};
use shunt_proxy::{
    dataplane::{
        ClientOptions, ProxyMetrics, ProxyOptions, ServerOptions,
        internals::{Proxy, UpstreamClients, server},
    },
    publish::RoutePublisher,
    spec::{BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec},
};
use tokio::{
    io::AsyncReadExt,
    net::{TcpListener, TcpStream},
};

pub fn mk_spec(protocol: UpstreamProtocol, endpoints: Vec<SocketAddr>) -> TableSpec {
    let backend = "ns/svc:80".to_string();
    TableSpec {
        hosts: vec![Arc::new(VirtualHostSpec {
            host: HostMatch::Exact("shop.example.com".into()),
            paths: vec![PathSpec {
                path: "/".into(),
                kind: PathKind::Prefix,
                backend: backend.clone(),
                source: "ns/shop".into(),
                ssl_redirect: false,
                options: Default::default(),
            }],
            exclusive: false,
        })],
        default_backend: None,
        backends: BTreeMap::from([(
            backend,
            BackendSpec {
                protocol,
                endpoints: endpoints.into(),
                topology: Default::default(),
                tls: None,
            },
        )]),
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    }
}

/// Starts the proxy on loopback serving `spec`; returns its address.
pub async fn start_proxy(spec: TableSpec) -> SocketAddr {
    start_proxy_with(spec, ProxyMetrics::detached()).await
}

/// [`start_proxy`], counting in `metrics`.
pub async fn start_proxy_with(spec: TableSpec, metrics: ProxyMetrics) -> SocketAddr {
    let (mut publisher, reader) = RoutePublisher::new(metrics.clone());
    publisher.publish(spec);
    let clients = UpstreamClients::new(&ClientOptions {
        connect_timeout: Duration::from_secs(2),
        ..Default::default()
    });
    let proxy = Proxy::new(
        reader,
        clients,
        ProxyOptions {
            access_log: false,
            ..Default::default()
        },
        metrics,
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        // Keep the publisher alive for the test's duration.
        let _publisher = publisher;
        let handler = move |req, conn| proxy.clone().serve(req, conn);
        server::serve(
            listener,
            &ServerOptions::default(),
            &server::Connections::default(),
            None,
            handler,
            std::future::pending(),
        )
        .await
        .unwrap();
    });
    addr
}

pub async fn get(proxy: SocketAddr, path: &str) -> (StatusCode, String) {
    let req = Request::get(format!("http://{proxy}{path}"))
        .header("host", "shop.example.com")
        .body(Empty::<Bytes>::new())
        .unwrap();
    send(req).await
}

/// Sends `req` on a fresh client (within 10 s): the status and the body as text.
pub async fn send<B>(req: Request<B>) -> (StatusCode, String)
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let response = respond(req).await;
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Sends `req` on a fresh client: the response, its head read within 10 s.
pub async fn respond<B>(req: Request<B>) -> http::Response<hyper::body::Incoming>
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let client = Client::builder(TokioExecutor::new()).build_http::<B>();
    tokio::time::timeout(Duration::from_secs(10), client.request(req))
        .await
        .unwrap()
        .unwrap()
}

/// Reads one request head off a raw backend connection: false if the peer closed first.
pub async fn read_request_head(stream: &mut TcpStream) -> bool {
    let mut buf = vec![0u8; 8192];
    let mut seen = Vec::new();
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buf).await.unwrap_or(0);
        if read == 0 {
            return false;
        }
        seen.extend_from_slice(&buf[..read]);
    }
    true
}
