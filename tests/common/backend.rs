//! The fake pod: an in-process origin (port 0 on loopback, or on a pod address) that says who it
//! is and what it saw, and remembers when each request arrived.
//!
//! ```text
//! shunt ─▶ Backend (HTTP/1.1 with upgrades, h2c only, or either) ─▶ arrival noted ─▶ delay ─▶ handler
//!          default handler: JSON echo of the request (e2e), or its name alone (Backend::pod)
//! ```

use std::{
    convert::Infallible,
    future::Future,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    pin::Pin,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Map, Value, json};
use tokio::{net::TcpListener, task::JoinHandle, time::Instant};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// What handlers answer with, and what clients send.
pub type Body = BoxBody<Bytes, BoxError>;
type BoxFuture = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;
type Handler = Arc<dyn Fn(Request<Incoming>) -> BoxFuture + Send + Sync>;

/// A running origin; stops accepting when dropped.
pub struct Backend {
    pub name: String,
    pub addr: SocketAddr,
    /// When each request arrived, oldest first.
    arrivals: Arc<Mutex<Vec<Instant>>>,
    accept: JoinHandle<()>,
}

/// The HTTP versions an origin speaks.
#[derive(Clone, Copy)]
enum Speaks {
    /// HTTP/1.1, with upgrades.
    Http1,
    /// HTTP/2 with prior knowledge only.
    H2c,
    /// Either, told apart by the preface.
    Any,
}

pub struct BackendBuilder {
    name: String,
    ip: IpAddr,
    speaks: Speaks,
    delay: Duration,
    handler: Option<Handler>,
}

// === impl Backend ===

impl Backend {
    /// An HTTP/1.1 origin answering with [`echo`].
    pub async fn start(name: &str) -> Backend {
        Backend::http1(name).start().await
    }

    pub fn http1(name: &str) -> BackendBuilder {
        BackendBuilder {
            name: name.to_string(),
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            speaks: Speaks::Http1,
            delay: Duration::ZERO,
            handler: None,
        }
    }

    /// Speaks HTTP/2 with prior knowledge only: an HTTP/1.1 request on it fails.
    pub fn h2c(name: &str) -> BackendBuilder {
        BackendBuilder {
            speaks: Speaks::H2c,
            ..Backend::http1(name)
        }
    }

    /// A pod as the cluster tests see it: any HTTP version, the body of every answer its name.
    pub fn pod(name: &str) -> BackendBuilder {
        let body = Bytes::from(name.to_string());
        BackendBuilder {
            speaks: Speaks::Any,
            ..Backend::http1(name)
        }
        .handler(move |_req| {
            let body = body.clone();
            async move { Response::new(full(body)) }
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Requests that reached this origin (counted on arrival, before any delay).
    pub fn hits(&self) -> usize {
        self.arrivals.lock().expect("arrivals lock").len()
    }

    /// When the first request at or after `since` arrived.
    pub fn first_hit_since(&self, since: Instant) -> Option<Instant> {
        self.arrivals
            .lock()
            .expect("arrivals lock")
            .iter()
            .copied()
            .find(|at| *at >= since)
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

// === impl BackendBuilder ===

impl BackendBuilder {
    /// Waits this long after a request arrives before handling it.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Listens on `ip` instead of loopback: a pod address for the real API server, which
    /// refuses loopback endpoints.
    pub fn on(mut self, ip: IpAddr) -> Self {
        self.ip = ip;
        self
    }

    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response<Body>> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |req| Box::pin(handler(req))));
        self
    }

    pub async fn start(self) -> Backend {
        self.try_start().await.expect("binding a backend")
    }

    /// [`BackendBuilder::start`], or why its address cannot be bound.
    pub async fn try_start(self) -> std::io::Result<Backend> {
        let listener = TcpListener::bind(SocketAddr::new(self.ip, 0)).await?;
        let addr = listener.local_addr().expect("a bound listener has an address");
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let handler = self.handler.unwrap_or_else(|| {
            let name = self.name.clone();
            Arc::new(move |req| Box::pin(echo(name.clone(), req)))
        });
        let accept = tokio::spawn(accept_loop(
            listener,
            self.speaks,
            self.delay,
            handler,
            arrivals.clone(),
        ));
        Ok(Backend {
            name: self.name,
            addr,
            arrivals,
            accept,
        })
    }
}

async fn accept_loop(
    listener: TcpListener,
    speaks: Speaks,
    delay: Duration,
    handler: Handler,
    arrivals: Arc<Mutex<Vec<Instant>>>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, say: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (handler, arrivals) = (handler.clone(), arrivals.clone());
        let service = service_fn(move |req| {
            let (handler, arrivals) = (handler.clone(), arrivals.clone());
            async move {
                arrivals.lock().expect("arrivals lock").push(Instant::now());
                tokio::time::sleep(delay).await;
                Ok::<_, Infallible>(handler(req).await)
            }
        });
        let io = TokioIo::new(stream);
        // Connection errors (a client that went away) are part of several tests: ignore them.
        match speaks {
            Speaks::Http1 => {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .with_upgrades();
                tokio::spawn(async move { drop(connection.await) });
            }
            Speaks::H2c => {
                let connection =
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new()).serve_connection(io, service);
                tokio::spawn(async move { drop(connection.await) });
            }
            Speaks::Any => {
                tokio::spawn(async move {
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    drop(builder.serve_connection(io, service).await)
                });
            }
        }
    }
}

/// FNV-1a, 64 bits: enough to tell two multi-megabyte bodies apart without another crate.
pub fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The default answer: `{"backend", "method", "path_and_query", "authority", "version", "headers",
/// "body_len", "body_fnv"}`, headers by lowercase name with repeated values joined by `, `.
pub async fn echo(name: String, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let mut headers = Map::new();
    for name in parts.headers.keys() {
        let values: Vec<&str> = parts
            .headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap_or("<binary>"))
            .collect();
        headers.insert(name.as_str().to_string(), Value::String(values.join(", ")));
    }
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => return text(StatusCode::BAD_REQUEST, format!("reading the request body: {error}")),
    };
    let report = json!({
        "backend": name,
        "method": parts.method.as_str(),
        "path_and_query": parts.uri.path_and_query().map_or("", |pq| pq.as_str()),
        // HTTP/2 carries the host here (`:authority`); HTTP/1.1 in the Host header.
        "authority": parts.uri.authority().map(|authority| authority.as_str()),
        "version": format!("{:?}", parts.version),
        "headers": headers,
        "body_len": body.len(),
        "body_fnv": format!("{:016x}", fnv64(&body)),
    });
    let mut response = Response::new(full(report.to_string()));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A response whose body sends `first`, then waits for `release` before `last` and its end: a
/// stream the test holds open.
pub fn held_stream(first: &'static [u8], release: Arc<tokio::sync::Notify>, last: &'static [u8]) -> Response<Body> {
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(2);
    tokio::spawn(async move {
        let _ = sender.send(Bytes::from_static(first)).await;
        release.notified().await;
        let _ = sender.send(Bytes::from_static(last)).await;
    });
    let frames = futures::stream::unfold(receiver, async |mut receiver| {
        let chunk = receiver.recv().await?;
        Some((Ok::<_, BoxError>(hyper::body::Frame::data(chunk)), receiver))
    });
    Response::new(http_body_util::StreamBody::new(frames).boxed())
}

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed()
}

pub fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response
}
