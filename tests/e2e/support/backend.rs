//! In-process origins on `127.0.0.1:0`: hyper servers that say who they are and what they saw.
//!
//! ```text
//! shunt ─▶ Backend (HTTP/1.1 with upgrades, or h2c only) ─▶ hits += 1 ─▶ delay ─▶ handler
//!                                                   default handler: JSON echo of the request
//! ```

use std::{
    convert::Infallible,
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Map, Value, json};
use tokio::{net::TcpListener, task::JoinHandle};

use super::fnv64;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// What handlers answer with, and what clients send.
pub type Body = BoxBody<Bytes, BoxError>;
type BoxFuture = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;
type Handler = Arc<dyn Fn(Request<Incoming>) -> BoxFuture + Send + Sync>;

/// A running origin; stops accepting when dropped.
pub struct Backend {
    pub name: String,
    pub addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

pub struct BackendBuilder {
    name: String,
    h2c: bool,
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
            h2c: false,
            delay: Duration::ZERO,
            handler: None,
        }
    }

    /// Speaks HTTP/2 with prior knowledge only: an HTTP/1.1 request on it fails.
    pub fn h2c(name: &str) -> BackendBuilder {
        BackendBuilder {
            h2c: true,
            ..Backend::http1(name)
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Requests that reached this origin (counted on arrival, before any delay).
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
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

    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response<Body>> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |req| Box::pin(handler(req))));
        self
    }

    pub async fn start(self) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding a backend on loopback");
        let addr = listener.local_addr().expect("a bound listener has an address");
        let hits = Arc::new(AtomicUsize::new(0));
        let handler = self.handler.unwrap_or_else(|| {
            let name = self.name.clone();
            Arc::new(move |req| Box::pin(echo(name.clone(), req)))
        });
        let accept = tokio::spawn(accept_loop(listener, self.h2c, self.delay, handler, hits.clone()));
        Backend {
            name: self.name,
            addr,
            hits,
            accept,
        }
    }
}

async fn accept_loop(listener: TcpListener, h2c: bool, delay: Duration, handler: Handler, hits: Arc<AtomicUsize>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, say: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (handler, hits) = (handler.clone(), hits.clone());
        let service = service_fn(move |req| {
            let (handler, hits) = (handler.clone(), hits.clone());
            async move {
                hits.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                Ok::<_, Infallible>(handler(req).await)
            }
        });
        let io = TokioIo::new(stream);
        // Connection errors (a client that went away) are part of several tests: ignore them.
        if h2c {
            let connection =
                hyper::server::conn::http2::Builder::new(TokioExecutor::new()).serve_connection(io, service);
            tokio::spawn(async move { drop(connection.await) });
        } else {
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .with_upgrades();
            tokio::spawn(async move { drop(connection.await) });
        }
    }
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
