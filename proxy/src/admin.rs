//! The admin listener: liveness, readiness, Prometheus metrics, the live route table and the
//! documents published with it (e.g. `/shadow`).
//!
//! The table's JSON and the documents are tens of MiB at 10,000 hosts. They are written on
//! tokio's blocking pool while they are sent, a chunk at a time (`response_body::streamed`), and
//! at most [`WRITERS`] at once: whatever the table's size and however many clients ask, writing
//! them holds a few hundred KiB.

use std::{
    io,
    sync::{Arc, LazyLock},
    time::Duration,
};

use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use prometheus_client::{
    metrics::{counter::Counter, family::Family},
    registry::Registry,
};
use tokio::sync::Semaphore;
use tracing::debug;

use crate::{
    body::ClientBody,
    error::plain_response,
    metrics,
    publish::RouteReader,
    response_body::{self, ChunkWriter, ResponseBody},
};

/// Documents written at once; a request past them is answered 503 at once.
pub const WRITERS: usize = 2;

/// How long a writer waits for a client to take the next chunk before it gives up.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client has to take a whole document: one that reads a chunk just before each
/// `SEND_TIMEOUT` would otherwise hold a writer for as long as it likes. Tens of MiB take
/// seconds even through `kubectl port-forward`.
const WHOLE_WITHIN: Duration = Duration::from_secs(300);

/// Document requests refused at the writers' bound, and documents stopped part-way (the
/// client left or stopped reading), labelled `outcome`.
static DOCUMENTS: LazyLock<Family<[(&'static str, &'static str); 1], Counter>> = LazyLock::new(Family::default);

/// Adds the admin listener's series to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(
        "shunt_admin_documents_unfinished",
        "Admin documents (/routes, /shadow, ...) refused while others were being written (outcome=\"busy\") or stopped part-way because the client left, stopped reading or took too long (outcome=\"abandoned\")",
        DOCUMENTS.clone(),
    );
}

#[derive(Clone)]
pub struct Admin {
    routes: RouteReader,
    registry: Arc<Registry>,
    writers: Arc<Semaphore>,
}

impl Admin {
    pub fn new(routes: RouteReader, registry: Arc<Registry>) -> Self {
        let writers = Arc::new(Semaphore::new(WRITERS));
        Admin {
            routes,
            registry,
            writers,
        }
    }

    pub async fn serve(&self, req: Request<ClientBody>) -> Response<ResponseBody> {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return plain_response(StatusCode::METHOD_NOT_ALLOWED, "admin endpoints are read-only");
        }
        match req.uri().path() {
            "/healthz" => text(StatusCode::OK, "ok\n"),
            "/readyz" if self.routes.is_ready() => text(StatusCode::OK, "ready\n"),
            "/readyz" => text(StatusCode::SERVICE_UNAVAILABLE, "no route table published yet\n"),
            "/metrics" => self.metrics(req.headers()),
            "/routes" => self.routes(req.method()),
            path => match self.document(req.method(), path.trim_start_matches('/')) {
                Some(response) => response,
                None => plain_response(StatusCode::NOT_FOUND, "try /healthz, /readyz, /metrics or /routes"),
            },
        }
    }

    fn metrics(&self, headers: &http::HeaderMap) -> Response<ResponseBody> {
        let scrape = match metrics::scrape::scrape(&self.registry, headers) {
            Ok(scrape) => scrape,
            Err(error) => return plain_response(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
        };
        let mut response = with_type(
            text(StatusCode::OK, scrape.body),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        );
        let headers = response.headers_mut();
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if let Some(encoding) = scrape.content_encoding {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
        }
        response
    }

    /// The live table's spec as JSON.
    fn routes(&self, method: &Method) -> Response<ResponseBody> {
        let table = Arc::clone(&self.routes.load());
        self.streamed(method, "routes", move |out| {
            serde_json::to_writer_pretty(out, &**table.spec()).map_err(io::Error::from)
        })
    }

    /// One of the table's documents (`TableSpec::documents`), as JSON: inflated as it is sent,
    /// and first written if deferred (~0.2 s for a 10,000-host `/shadow`).
    fn document(&self, method: &Method, name: &str) -> Option<Response<ResponseBody>> {
        let document = self.routes.load().spec().documents.get(name)?.clone();
        Some(self.streamed(method, name, move |out| document.write_text(out).map(drop)))
    }

    /// JSON that `write` writes, sent as it is written on tokio's blocking pool: the admin
    /// listener shares its runtime with the controller's watches and leader election, which must
    /// not wait behind a large document. 503 while [`WRITERS`] others are being written.
    fn streamed(
        &self,
        method: &Method,
        name: &str,
        write: impl FnOnce(&mut ChunkWriter) -> io::Result<()> + Send + 'static,
    ) -> Response<ResponseBody> {
        if method == Method::HEAD {
            return with_type(Response::new(ResponseBody::empty()), "application/json");
        }
        let Ok(permit) = Arc::clone(&self.writers).try_acquire_owned() else {
            DOCUMENTS.get_or_create(&[("outcome", "busy")]).inc();
            let mut busy = plain_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "other documents are being written; retry",
            );
            busy.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return busy;
        };
        let (mut out, body) = response_body::streamed::channel(SEND_TIMEOUT, WHOLE_WITHIN);
        let name = name.to_string();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            if let Err(error) = write(&mut out).and_then(|()| out.finish()) {
                DOCUMENTS.get_or_create(&[("outcome", "abandoned")]).inc();
                debug!(document = %name, %error, "Stopped writing an admin document");
            }
        });
        with_type(
            Response::new(ResponseBody::Streamed(Box::new(body))),
            "application/json",
        )
    }
}

fn text(status: StatusCode, body: impl Into<bytes::Bytes>) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::full(body));
    *response.status_mut() = status;
    with_type(response, "text/plain; charset=utf-8")
}

fn with_type(mut response: Response<ResponseBody>, content_type: &'static str) -> Response<ResponseBody> {
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests;
