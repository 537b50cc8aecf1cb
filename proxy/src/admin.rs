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
            "/routes" => self.routes(),
            path => match self.document(path.trim_start_matches('/')) {
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

    fn routes(&self) -> Response<ResponseBody> {
        let table = self.routes.load();
        match serde_json::to_vec_pretty(&**table.spec()) {
            Ok(json) => with_type(text(StatusCode::OK, json), "application/json"),
            Err(error) => plain_response(StatusCode::INTERNAL_SERVER_ERROR, &format!("encoding routes: {error}")),
        }
    }
}

impl Admin {
    /// One of the table's documents (`TableSpec::documents`), as JSON.
    fn document(&self, name: &str) -> Option<Response<ResponseBody>> {
        let table = self.routes.load();
        let document = table.spec().documents.get(name)?;
        let body = bytes::Bytes::from(document.text());
        Some(with_type(text(StatusCode::OK, body), "application/json"))
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
