//! The admin listener: liveness, readiness, Prometheus metrics, the live route table and the
//! documents published with it (e.g. `/shadow`).

use std::sync::Arc;

use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use prometheus_client::registry::Registry;

use crate::{body::ClientBody, error::plain_response, metrics, publish::RouteReader, response_body::ResponseBody};

#[derive(Clone)]
pub struct Admin {
    routes: RouteReader,
    registry: Arc<Registry>,
}

impl Admin {
    pub fn new(routes: RouteReader, registry: Arc<Registry>) -> Self {
        Admin { routes, registry }
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
            "/routes" => self.routes().await,
            path => match self.document(path.trim_start_matches('/')).await {
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

    /// The live table's spec as JSON (tens of MiB at 10,000 hosts), written on a blocking thread.
    async fn routes(&self) -> Response<ResponseBody> {
        let table = Arc::clone(&self.routes.load());
        let json =
            off_the_runtime(move || serde_json::to_vec_pretty(&**table.spec()).map_err(|error| error.to_string()))
                .await
                .unwrap_or_else(|error| Err(error.to_string()));
        match json {
            Ok(json) => with_type(text(StatusCode::OK, json), "application/json"),
            Err(error) => plain_response(StatusCode::INTERNAL_SERVER_ERROR, &format!("encoding routes: {error}")),
        }
    }
}

impl Admin {
    /// One of the table's documents (`TableSpec::documents`), as JSON: inflated, and first
    /// written if deferred (~0.2 s for a 10,000-host `/shadow`), on a blocking thread.
    async fn document(&self, name: &str) -> Option<Response<ResponseBody>> {
        let document = self.routes.load().spec().documents.get(name)?.clone();
        Some(match off_the_runtime(move || document.text()).await {
            Ok(body) => with_type(text(StatusCode::OK, body), "application/json"),
            Err(error) => plain_response(StatusCode::INTERNAL_SERVER_ERROR, &format!("writing /{name}: {error}")),
        })
    }
}

/// Runs `work` on tokio's blocking pool: the admin listener shares its runtime with the
/// controller's watches and leader election, which must not wait behind a large document.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    tokio::task::spawn_blocking(work).await
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
