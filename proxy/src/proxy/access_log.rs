//! Access log: once a request is over, its line (`--access-log`) and its counts in the route's
//! and the upstream's metrics.

use crate::limits::InProgress;
use std::{net::SocketAddr, sync::Arc, time::Instant};

use http::{HeaderValue, Method, Request, StatusCode};
use tracing::{debug, info};

use crate::{
    body::ClientBody, error::CLIENT_CLOSED_REQUEST, metrics::ProxyMetrics, routes::Route, server::ConnInfo,
    upstream::Upstream,
};

/// What a request did, filled in by the phases as they go.
#[derive(Default)]
pub(super) struct Outcome {
    pub route: Option<Arc<Route>>,
    /// The request was admitted: the access log names its host (`Logged`'s).
    pub admitted: bool,
    pub endpoint: Option<SocketAddr>,
    pub request_id: Option<HeaderValue>,
    /// The route's CORS allowed the request's Origin: the `Access-Control-Allow-Origin` value.
    pub cors_origin: Option<HeaderValue>,
    /// When the pod's response head came: read once for the upstream's latency and the route's.
    pub answered: Option<Instant>,
    /// Tries sent upstream, retries included (0: none was sent).
    pub attempts: u32,
    /// The request's place under its route's requests-in-progress limit, handed to the body.
    pub in_progress: Option<InProgress>,
    /// The backend a split route's share went to: counted as the route's own backend is.
    pub split_upstream: Option<Arc<Upstream>>,
    /// The answer is an error page's (see `error_pages.rs`): nginx's named location runs none
    /// of the route's header filter (no HSTS, no CORS fields).
    pub error_page: bool,
    /// The caller a route's realip rule found, instead of the connection's peer.
    pub client: Option<std::net::IpAddr>,
    /// The route's auth service sent a cookie for the caller's answer. Boxed, like `Logged`:
    /// few routes have one, and every request's future carries this.
    pub auth_cookie: Option<Box<super::auth::AuthCookie>>,
}

/// Counts and logs a request when dropped: after its response head, or when hyper drops the
/// request because the client went away (then it is a 499, like nginx's).
pub(super) struct Record<'a> {
    metrics: &'a ProxyMetrics,
    conn: ConnInfo,
    started: Instant,
    /// Boxed: only a proxy with the access log on fills it, and inline it would grow the
    /// request's future past mimalloc's small sizes (1 KiB), whose allocations cost a fifth.
    logged: Option<Box<Logged>>,
    pub outcome: Outcome,
    /// `None` until a response exists.
    pub status: Option<StatusCode>,
}

/// What the access log's line says of the request as it came.
struct Logged {
    method: Method,
    uri: http::Uri,
    /// As `admit` reads it; named only once the request was admitted.
    host: Option<HeaderValue>,
}

impl<'a> Record<'a> {
    /// Starts the clock; keeps the method and target only when `access_log` is on.
    #[inline]
    pub fn start(metrics: &'a ProxyMetrics, conn: ConnInfo, access_log: bool, req: &Request<ClientBody>) -> Self {
        Record {
            metrics,
            conn,
            started: Instant::now(),
            logged: access_log.then(|| {
                Box::new(Logged {
                    method: req.method().clone(),
                    uri: req.uri().clone(),
                    host: super::admit::request_host(req).ok(),
                })
            }),
            outcome: Outcome::default(),
            status: None,
        }
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        let status = self.status.unwrap_or_else(|| {
            debug!(client.addr = %self.conn.peer, "Client went away before the response");
            CLIENT_CLOSED_REQUEST
        });
        let outcome = &self.outcome;
        let duration = outcome.answered.unwrap_or_else(Instant::now) - self.started;
        match &outcome.route {
            Some(route) => count(route, status, duration),
            None => self.metrics.unmatched().record(status, duration),
        }
        if let Some(upstream) = &outcome.split_upstream {
            upstream.stats.record(duration);
        }
        if let Some(Logged { method, uri, host }) = self.logged.as_deref() {
            let host = (host.as_ref())
                .filter(|_| outcome.admitted)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("");
            info!(
                target: "shunt::access",
                client = %outcome.client.unwrap_or(self.conn.peer.ip()),
                %method,
                host,
                path = uri.path(),
                status = status.as_u16(),
                route = outcome.route.as_ref().map_or("", |r| &*r.name),
                upstream = outcome.endpoint.map(|a| a.to_string()).unwrap_or_default(),
                attempts = outcome.attempts,
                duration_ms = duration.as_secs_f64() * 1000.0,
                request_id = outcome.request_id.as_ref().and_then(|v| v.to_str().ok()).unwrap_or(""),
                "Request",
            );
        }
    }
}

/// Counts one finished request in its route's series and, for a route with an upstream, the
/// upstream's.
pub fn count(route: &Route, status: StatusCode, elapsed: std::time::Duration) {
    route.stats.record(status, elapsed);
    if route.stats.has_backend() {
        route.upstream.stats.record(elapsed);
    }
}
