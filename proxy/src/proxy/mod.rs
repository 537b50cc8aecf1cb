//! The request path as named phases, each in its own file and run in this order (`finish` is
//! `answer.rs`'s too, run on every answer given for a route, the pod's or ours):
//!
//! ```text
//! request ─▶ admit ─▶ route ─▶ answer ────▶ prepare ──▶ attempt ───▶ respond ────▶ finish ──────▶ client
//!            │ 400    │ 404    │ 413, CORS  │ fields,   │ endpoints, │ hop-by-hop, │ style, HSTS,
//!            │        │        │ preflight, │ Host,     │ retries    │ tunnel      │ CORS fields
//!            │        │        │ redirects, │ rewrite,  │            │             │
//!            │        │        │ 403, 503   │ body slot │            │             │
//!            └────────┴────────┴────────────┴───────────┴────────────┴─────────────┴─ access_log: on drop
//! ```
//!
//! Where a new feature goes (an nginx annotation, a retry rule), by what it changes:
//! - `admit.rs`: whether a request is acceptable at all, before any route is known (methods,
//!   request targets, path normalisation, the host).
//! - `route.rs`: which route the host and path lead to.
//! - `answer.rs`: what the route answers without asking a pod (limits, CORS preflight,
//!   redirects, access rules), and what it adds to every answer given for it, the pod's or ours
//!   (`finish`: the answer style's pages and hidden fields, HSTS, CORS fields).
//! - `auth.rs`: a route's external authentication (`auth-url`), between `answer` and
//!   `prepare`, as nginx's `auth_request` comes after the access rules: the auth service's 2xx,
//!   or 401 (or the sign-in redirect), 403, 500; only routes with it pay for it.
//! - `prepare.rs`: the request as the pod will see it: the route's set of forwarding fields
//!   (`prepare/forwarding.rs`), header rewrites and edits, rewrite-target and path
//!   replacement, upgrade detection, the replayable body.
//! - `mirror.rs`: after `prepare`, copies of the request for a route's mirror backends, sent
//!   in tasks of their own (only routes with mirrors pay for it).
//! - `attempt.rs`: the loop of tries against endpoints; which failures are retried is decided in
//!   `retry.rs` (by error type, with the endpoint's and upstream's state), which turns the rest
//!   into a `ProxyError`: below it, `upstream` never names the proxy's errors. Its `pick`, run
//!   between `answer` and `prepare`, draws a split route's share (its backend, or 500) and
//!   makes a canary, hash or affinity route's choice. A route with a gate (auth, error pages)
//!   runs the rest in `forward_gated`, a boxed future of its own, so plain routes' stays small.
//! - `error_pages.rs`: an answer with a status the route lists replaced by its error backend's.
//! - `respond.rs`: the response as the client will see it: hop-by-hop fields, the route's
//!   response header edits, trailers, the upgrade hand-off to a tunnel.
//! - `access_log.rs`: what is logged and counted once the request is over.

mod access_log;
mod admit;
mod answer;
mod attempt;
mod auth;
mod error_pages;
mod mirror;
mod prepare;
mod respond;
mod retry;
mod route;

use std::{pin::Pin, sync::Arc, time::Duration};

use http::{Request, Response};
use tracing::{debug, warn};

pub use self::access_log::count;
use self::{
    access_log::{Outcome, Record},
    admit::Admitted,
    answer::Answer,
};
use crate::{
    body::ClientBody,
    error::{ErrorSource, ProxyError},
    headers::AllowedUpgrades,
    lograte::LogRate,
    metrics::ProxyMetrics,
    publish::RouteReader,
    response_body::ResponseBody,
    server::ConnInfo,
    server::tunnel::Tunnels,
    spec::{RetryPolicy, TrustedProxies, defaults},
    upstream::UpstreamClients,
};

#[derive(Clone, Debug)]
pub struct ProxyOptions {
    pub trusted_proxies: TrustedProxies,
    /// From sending the request to the response head.
    pub upstream_timeout: Duration,
    pub max_body_size: Option<u64>,
    /// Endpoints one request may try when connecting fails. Must be at least 1.
    pub connect_attempts: usize,
    pub access_log: bool,
    /// Longest wait between two reads of a request body (`--client-body-timeout`); then 408.
    pub client_body_timeout: Duration,
    /// Caps each of the auth service's connect and answer timeouts (`--external-auth-timeout`).
    pub external_auth_timeout: Duration,
    /// Where upgraded connections run (idle timeout, gauge, closed at the drain deadline).
    pub tunnels: Tunnels,
    /// Upgrade protocols forwarded besides WebSocket (`--allow-upgrade`).
    pub allowed_upgrades: AllowedUpgrades,
    /// Keep request fields whose names hold `_` (`--allow-underscores-in-headers`).
    pub underscores_in_headers: bool,
    /// Retries after resets and timeouts, their budget, and outlier ejection.
    pub retry: RetryPolicy,
    /// The window over which a new endpoint's share grows to its full weight (`--slow-start`).
    pub slow_start: Option<Duration>,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            trusted_proxies: TrustedProxies::default(),
            upstream_timeout: defaults::UPSTREAM_TIMEOUT,
            max_body_size: None,
            connect_attempts: usize::from(defaults::CONNECT_ATTEMPTS),
            access_log: defaults::ACCESS_LOG,
            client_body_timeout: defaults::CLIENT_BODY_TIMEOUT,
            external_auth_timeout: defaults::EXTERNAL_AUTH_TIMEOUT,
            tunnels: Tunnels::default(),
            allowed_upgrades: AllowedUpgrades::default(),
            underscores_in_headers: false,
            retry: RetryPolicy::default(),
            slow_start: None,
        }
    }
}

/// The proxy; cheap to clone, one per listener is plenty.
#[derive(Clone)]
pub struct Proxy(Arc<Inner>);

struct Inner {
    routes: RouteReader,
    clients: UpstreamClients,
    options: ProxyOptions,
    metrics: ProxyMetrics,
    /// One "Request failed" line per upstream and reason per second, whatever the error rate.
    failures: LogRate,
}

// === impl Proxy ===

impl Proxy {
    pub fn new(routes: RouteReader, clients: UpstreamClients, options: ProxyOptions, metrics: ProxyMetrics) -> Self {
        Proxy(Arc::new(Inner {
            routes,
            clients,
            options,
            metrics,
            failures: LogRate::per_second(),
        }))
    }

    /// Answers one request; failures become short plain-text responses.
    ///
    /// Boxed, so every layer above (our handler, hyper's dispatcher, the task hyper's HTTP/2
    /// server spawns per stream) moves a pointer instead of this future when it takes it.
    ///
    /// By value: the future owns its clone of the proxy, so a handler returns this box itself
    /// instead of an async block holding the proxy, the request and this box.
    pub fn serve(
        self,
        req: Request<ClientBody>,
        conn: ConnInfo,
    ) -> Pin<Box<impl Future<Output = Response<ResponseBody>> + Send + 'static>> {
        Box::pin(self.handle(req, conn))
    }

    async fn handle(self, req: Request<ClientBody>, conn: ConnInfo) -> Response<ResponseBody> {
        let inner = &*self.0;
        let mut record = Record::start(&inner.metrics, conn, inner.options.access_log, &req);
        // Boxed apart: the forwarding future is kilobytes (the upstream exchange, its timeout,
        // the request's parts). Built in its own box, it is never moved; inlined here, it would
        // be moved into this future's state and then within it, which costs more than the
        // second allocation.
        let forwarded = Box::pin(self.forward(req, conn, &mut record.outcome));
        let mut response = match forwarded.await {
            Ok(response) => response,
            Err(error) => {
                match error.source_side() {
                    ErrorSource::Client => debug!(%error, client.addr = %conn.peer, "Request refused"),
                    side => {
                        if let Some(suppressed) = inner.failures.admit(&error.to_string()) {
                            warn!(%error, client.addr = %conn.peer, ?side, suppressed, "Request failed");
                        }
                    }
                }
                error.into_response()
            }
        };
        if let Some(route) = record.outcome.route.as_deref() {
            let made_here = record.outcome.answered.is_none();
            // Read before `finish` hides the pod's `X-Accel-*` fields. An error backend's answer
            // comes from nginx's `@custom_*` location, which has no `limit_rate`.
            let pace = (route.rules.response_pace.as_deref().copied())
                .filter(|_| !record.outcome.error_page)
                .and_then(|pace| crate::pace::for_answer(pace, response.headers()));
            answer::finish(
                &mut response,
                route,
                conn.tls && !record.outcome.error_page,
                made_here,
                record.outcome.cors_origin.take(),
            );
            if let Some(pace) = pace {
                response.body_mut().pace(pace);
            }
        }
        if let Some(cookie) = record.outcome.auth_cookie.take() {
            auth::add_cookie(&mut response, *cookie);
        }
        if let Some(in_progress) = record.outcome.in_progress.take() {
            response.body_mut().hold(in_progress);
        }
        record.status = Some(response.status());
        response
    }

    /// The phases in order; each one may answer (an error, a redirect) instead of going on.
    ///
    /// A route with a gate (external auth, error pages) goes on in [`Proxy::forward_gated`],
    /// boxed: its auth exchange and second try stay out of this future, which every request
    /// allocates, fills and moves.
    async fn forward(
        &self,
        req: Request<ClientBody>,
        conn: ConnInfo,
        outcome: &mut Outcome,
    ) -> Result<Response<ResponseBody>, ProxyError> {
        let inner = &*self.0;
        let Admitted { normalized, host } = admit::admit(&req)?;
        outcome.admitted = true;
        let host_str = host.to_str().map_err(|_| ProxyError::MissingHost)?;
        let mut request = route::Request {
            req: &req,
            normalized: normalized.as_ref(),
            host: host_str,
            conn,
        };
        // In a block of its own, so the answer's space is not kept across the awaits below.
        let route = {
            let answered = route::route(&inner.routes, &mut request, outcome)
                .and_then(|route| answer::answer(route, &request, inner.options.max_body_size, outcome));
            match answered {
                Ok(Answer::Forward(route)) => route,
                Ok(Answer::Answered(response)) => {
                    req.into_body().linger();
                    return Ok(response);
                }
                Err(error) => {
                    req.into_body().linger();
                    return Err(error);
                }
            }
        };
        // The caller as the route sees it (see `route::caller`).
        let conn = request.conn;
        if route.rules.external_auth.is_some() || route.rules.error_pages.is_some() {
            let routed = Routed {
                normalized,
                host: (&host, host_str),
                route: &route,
                conn,
            };
            return Box::pin(self.forward_gated(req, routed, outcome)).await;
        }
        let (drawn, choice) = match attempt::pick(&route, &request, outcome) {
            Ok(picked) => picked,
            Err(error) => {
                req.into_body().linger();
                return Err(error);
            }
        };
        let mut prepared = prepare::prepare(req, normalized, (&host, host_str), (&route, drawn), conn, inner);
        if let Some(copies) = &route.rules.mirror {
            mirror::mirror(inner, copies, host_str, &prepared);
        }
        outcome.request_id = prepared.request_id.take();
        // By reference: the prepared request stays where it is while the attempts run.
        attempt::attempt(inner, (&route, drawn), host_str, choice, &mut prepared, outcome).await
    }

    /// The rest of `forward` for a route with a gate: the auth service before the request is
    /// prepared, the error backend after the pod's answer.
    async fn forward_gated(
        &self,
        req: Request<ClientBody>,
        Routed {
            normalized,
            host: (host, host_str),
            route,
            conn,
        }: Routed<'_>,
        outcome: &mut Outcome,
    ) -> Result<Response<ResponseBody>, ProxyError> {
        let inner = &*self.0;
        let request = route::Request {
            req: &req,
            normalized: normalized.as_ref(),
            host: host_str,
            conn,
        };
        let passed = match &route.rules.external_auth {
            None => None,
            Some(rule) => match auth::gate(inner, rule, route, &request, outcome).await {
                Ok(passed) => Some(passed),
                Err(refused) => {
                    req.into_body().linger();
                    return refused.into_result();
                }
            },
        };
        let (drawn, choice) = match attempt::pick(route, &request, outcome) {
            Ok(picked) => picked,
            Err(error) => {
                req.into_body().linger();
                return Err(error);
            }
        };
        let mut req = req;
        if let Some(id) = passed.as_ref().and_then(|passed| passed.new_request_id.clone()) {
            req.headers_mut()
                .insert(http::header::HeaderName::from_static("x-request-id"), id);
        }
        // Read from the request as the client sent it, for a route with error pages only.
        let failed = route.rules.error_pages.as_deref().map(|pages| error_pages::Failed {
            pages,
            target: req.uri().path_and_query().cloned(),
            host: host.clone(),
            conn,
        });
        let mut prepared = prepare::prepare(req, normalized, (host, host_str), (route, drawn), conn, inner);
        if let Some(passed) = passed {
            auth::apply(passed, &mut prepared.headers);
        }
        if let Some(copies) = &route.rules.mirror {
            mirror::mirror(inner, copies, host_str, &prepared);
        }
        outcome.request_id = prepared.request_id.take();
        let answered = attempt::attempt(inner, (route, drawn), host_str, choice, &mut prepared, outcome).await;
        match failed {
            None => answered,
            Some(failed) => {
                error_pages::intercept(inner, route, failed, host_str, &mut prepared, outcome, answered).await
            }
        }
    }
}

/// What routing leaves for a gated route's rest of `forward`, besides the request itself.
struct Routed<'a> {
    normalized: Option<http::uri::PathAndQuery>,
    host: (&'a http::HeaderValue, &'a str),
    route: &'a Arc<crate::routes::Route>,
    conn: ConnInfo,
}

#[cfg(test)]
mod tests;
