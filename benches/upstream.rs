//! One proxied HTTP/1.1 request on the per-request path, end to end on loopback: a keep-alive
//! client ─▶ the in-process proxy (one current-thread runtime, like a worker) ─▶ a hyper origin.
//! Measures what the upstream pool adds per request; uses only the proxy's public API, so the
//! same file runs against older commits for a before/after.
//! `cargo bench -p shunt-proxy --bench upstream`

use std::{collections::BTreeMap, convert::Infallible, net::SocketAddr, sync::Arc, time::Duration};

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http::{Request, Response};
use http_body_util::{BodyExt, Empty, Full};
use hyper::{client::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use shunt_proxy::{
    dataplane::{
        ClientOptions, ProxyMetrics, ProxyOptions, ServerOptions,
        internals::{Proxy, UpstreamClients, server},
    },
    publish::RoutePublisher,
    spec::{BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec},
};
use tokio::net::{TcpListener, TcpStream};

const HOST: &str = "bench.example.com";

fn mk_spec(origin: SocketAddr) -> TableSpec {
    let backend = "bench/origin:80".to_string();
    TableSpec {
        hosts: vec![Arc::new(VirtualHostSpec {
            host: HostMatch::Exact(HOST.into()),
            paths: vec![PathSpec {
                path: "/".into(),
                kind: PathKind::Prefix,
                backend: backend.clone(),
                source: "bench/origin".into(),
                ssl_redirect: false,
                options: Default::default(),
            }],
            exclusive: false,
        })],
        default_backend: None,
        backends: BTreeMap::from([(
            backend,
            BackendSpec {
                protocol: UpstreamProtocol::Http1,
                endpoints: [origin].into(),
                topology: Default::default(),
                tls: None,
            },
        )]),
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    }
}

async fn start_origin() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding the origin");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service_fn(|_req| async {
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"hello, bench"))))
            });
            tokio::spawn(http1_serve(stream, service));
        }
    });
    addr
}

async fn http1_serve<S>(stream: TcpStream, service: S)
where
    S: hyper::service::HttpService<hyper::body::Incoming>,
    S::Future: 'static,
    S::ResBody: 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    drop(
        hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .await,
    );
}

async fn start_proxy(origin: SocketAddr) -> SocketAddr {
    let metrics = ProxyMetrics::detached();
    let (mut publisher, reader) = RoutePublisher::new(metrics.clone());
    publisher.publish(mk_spec(origin));
    let clients = UpstreamClients::new(&ClientOptions {
        connect_timeout: Duration::from_secs(2),
        ..Default::default()
    });
    let options = ProxyOptions {
        access_log: false,
        ..Default::default()
    };
    let proxy = Proxy::new(reader, clients, options, metrics);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding the proxy");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        let _publisher = publisher;
        let handler = move |req, conn| {
            let proxy = proxy.clone();
            async move { proxy.serve(req, conn).await }
        };
        let options = ServerOptions::default();
        drop(
            server::serve(
                listener,
                &options,
                &server::Connections::default(),
                None,
                handler,
                std::future::pending(),
            )
            .await,
        );
    });
    addr
}

fn proxied_request(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut sender = runtime.block_on(async {
        let origin = start_origin().await;
        let proxy = start_proxy(origin).await;
        let stream = TcpStream::connect(proxy).await.expect("connecting to the proxy");
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await.expect("handshake");
        tokio::spawn(connection);
        sender
    });
    c.bench_function("proxied_get_keepalive", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let req = Request::get("/bench")
                    .header("host", HOST)
                    .body(Empty::<Bytes>::new())
                    .expect("a valid request");
                sender.ready().await.expect("the client connection is up");
                let response = sender.send_request(req).await.expect("a response");
                assert!(response.status().is_success());
                response.into_body().collect().await.expect("the body")
            })
        })
    });
}

criterion_group!(benches, proxied_request);
criterion_main!(benches);
