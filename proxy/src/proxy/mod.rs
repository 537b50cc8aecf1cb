//! The request path as named phases, each in its own file and run in this order:
//!
//! ```text
//! request ─▶ admit ─▶ route ─▶ prepare ─▶ attempt ─▶ respond ─▶ client
//!             │ 400     │ 404, redirect,   │ headers,  │ pick an endpoint, send;     │ hop-by-hop out,
//!             │         │ 503, 413         │ body slot │ retry by upstream::retry    │ or hand over a tunnel
//!             └─────────┴──────────────────┴───────────┴── access_log: one line and the metrics, on drop
//! ```
//!
//! Where a new feature goes (an nginx annotation, a retry rule), by what it changes:
//! - `admit.rs`: whether a request is acceptable at all, before any route is known (methods,
//!   request targets, path normalisation, the host).
//! - `route.rs`: what the route decides without asking a pod: lookup, redirects, answers made
//!   here (access rules, CORS preflight), limits of the route (body size), canary choice.
//! - `prepare.rs`: the request as the pod will see it: header rewrites, rewrite-target, CORS or
//!   custom request headers, upgrade detection, the replayable body.
//! - `attempt.rs`: the loop of tries against endpoints; which failures are retried is decided in
//!   `upstream/retry.rs`, not here.
//! - `respond.rs`: the response as the client will see it: hop-by-hop fields, response headers
//!   (CORS), the upgrade hand-off to a tunnel.
//! - `access_log.rs`: what is logged and counted once the request is over.

mod access_log;
mod admit;
mod attempt;
mod prepare;
mod respond;
mod route;

use std::{sync::Arc, time::Duration};

use http::{HeaderValue, Request, Response};
use tracing::{debug, warn};

pub use self::access_log::count;
use self::{
    access_log::{Outcome, Record},
    admit::Admitted,
    route::Routed,
};
use crate::{
    body::{ClientBody, ResponseBody},
    error::{ErrorSource, ProxyError},
    headers::{AllowedUpgrades, hide_upstream_fields},
    lograte::LogRate,
    metrics::ProxyMetrics,
    publish::RouteReader,
    routes::Route,
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
    pub fn serve(
        &self,
        req: Request<ClientBody>,
        conn: ConnInfo,
    ) -> impl Future<Output = Response<ResponseBody>> + Send + '_ {
        Box::pin(self.answer(req, conn))
    }

    async fn answer(&self, req: Request<ClientBody>, conn: ConnInfo) -> Response<ResponseBody> {
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
            profile_answer(
                &mut response,
                route,
                conn.tls,
                made_here,
                record.outcome.cors_origin.take(),
            );
        }
        record.status = Some(response.status());
        response
    }

    /// The phases in order; each one may answer (an error, a redirect) instead of going on.
    async fn forward(
        &self,
        req: Request<ClientBody>,
        conn: ConnInfo,
        outcome: &mut Outcome,
    ) -> Result<Response<ResponseBody>, ProxyError> {
        let inner = &*self.0;
        let Admitted { normalized, host } = admit::admit(&req)?;
        outcome.host = Some(host.clone());
        let host_str = host.to_str().map_err(|_| ProxyError::MissingHost)?;
        let request = route::Request {
            req: &req,
            normalized: normalized.as_ref(),
            host: host_str,
            conn,
        };
        let routed = route::route(&inner.routes, &request, inner.options.max_body_size, outcome);
        let route = match routed {
            Ok(Routed::Forward(route)) => route,
            Ok(Routed::Answered(response)) => {
                req.into_body().linger();
                return Ok(response);
            }
            Err(error) => {
                req.into_body().linger();
                return Err(error);
            }
        };
        let mut prepared = prepare::prepare(req, normalized, &host, host_str, &route, conn, inner);
        outcome.request_id = prepared.request_id.take();
        // By reference: the prepared request stays where it is while the attempts run.
        attempt::attempt(inner, &route, host_str, &mut prepared, outcome).await
    }
}

/// What a route's profile adds to every answer given for it, from the pod or from us (a redirect,
/// a 413, a 502): ingress-nginx's header filter runs on all of them, and nginx writes its own
/// page for those it makes.
#[inline(always)]
fn profile_answer(
    response: &mut Response<ResponseBody>,
    route: &Route,
    tls: bool,
    made_here: bool,
    cors_origin: Option<HeaderValue>,
) {
    if !route.rules.forwarding.is_standard() {
        if made_here {
            crate::pages::as_nginx_page(response);
        } else {
            hide_upstream_fields(response.headers_mut());
        }
    }
    if tls && let Some(hsts) = &route.rules.hsts {
        response
            .headers_mut()
            .insert(http::header::STRICT_TRANSPORT_SECURITY, hsts.clone());
    }
    // Set only when the route has CORS and allowed the Origin; not on a 413 for a declared
    // length, which nginx answers before the location's `if`s run.
    if let Some(origin) = cors_origin
        && let Some(cors) = &route.rules.cors
    {
        cors.set_fields(response.headers_mut(), origin);
    }
}

#[cfg(test)]
mod tests;
