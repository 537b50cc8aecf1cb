//! The request path: route, rewrite headers, pick an endpoint, forward, stream the answer back.
//!
//! ```text
//! request ─▶ host+path lookup ─▶ hop-by-hop out, X-Forwarded-* in ─▶ p2c endpoint ─▶ pooled client
//!                 │ none: 404                                           │ connect error: next endpoint
//!                 ▼                                                     ▼ timeout: 504, else 502
//! ```

use std::{
    io,
    net::SocketAddr,
    pin::pin,
    sync::Arc,
    time::{Duration, Instant},
};

use http::{HeaderValue, Method, Request, Response, StatusCode, Version, header, uri::PathAndQuery};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tracing::{debug, info, warn};

use crate::{
    body::{BodySlot, ClientBody, RequestBody, RequestBodyError, ResponseBody},
    error::{CLIENT_CLOSED_REQUEST, ErrorSource, ProxyError},
    headers::{
        AddedFields, ForwardedContext, TrustedProxies, drop_length_beside_transfer_encoding, join_cookies,
        set_forwarded, strip_hop_by_hop, upgrade_protocol,
    },
    lograte::LogRate,
    metrics::ProxyMetrics,
    publish::RouteReader,
    redirect,
    request::{check_method, check_target, normalized_path_and_query},
    routes::{Route, normalize_host, spec::UpstreamProtocol},
    tunnel::Tunnels,
    upstream::{
        EndpointGuard, Outgoing, UpstreamBody, UpstreamClients, UpstreamError,
        h1::{Upgraded, WriteAt},
        retry::{self, chain_has, find_in_chain},
    },
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
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            trusted_proxies: TrustedProxies::default(),
            upstream_timeout: Duration::from_secs(60),
            max_body_size: None,
            connect_attempts: 3,
            access_log: true,
            client_body_timeout: Duration::from_secs(60),
            tunnels: Tunnels::default(),
        }
    }
}

/// The connection a request arrived on.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    pub tls: bool,
}

/// The proxy; cheap to clone, one per listener is plenty.
#[derive(Clone)]
pub struct Proxy(Arc<Inner>);

struct Inner {
    routes: RouteReader,
    clients: UpstreamClients,
    options: ProxyOptions,
    metrics: ProxyMetrics,
    /// One "Request failed" line per backend and reason per second, whatever the error rate.
    failures: LogRate,
}

/// What a request did, for its access log line and metrics.
#[derive(Default)]
struct Outcome {
    route: Option<Arc<Route>>,
    host: Option<HeaderValue>,
    endpoint: Option<SocketAddr>,
    request_id: Option<HeaderValue>,
    /// When the pod's response head came: read once for the backend's latency and the route's.
    answered: Option<Instant>,
}

/// Counts and logs a request when dropped: after its response head, or when hyper drops the
/// request because the client went away (then it is a 499, like nginx's).
struct Record<'a> {
    proxy: &'a Proxy,
    conn: ConnInfo,
    started: Instant,
    logged: Option<(Method, http::Uri)>,
    outcome: Outcome,
    /// `None` until a response exists.
    status: Option<StatusCode>,
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
        let mut record = Record {
            proxy: self,
            conn,
            started: Instant::now(),
            // Kept only for the access log line.
            logged: self
                .0
                .options
                .access_log
                .then(|| (req.method().clone(), req.uri().clone())),
            outcome: Outcome::default(),
            status: None,
        };
        // Boxed apart: the forwarding future is kilobytes (the upstream exchange, its timeout,
        // the request's parts). Built in its own box, it is never moved; inlined here, it is
        // moved into this future's state and then moved within it (measured: more instructions
        // per HTTP/1.1 request than the second allocation costs).
        let forwarded = Box::pin(self.forward(req, conn, &mut record.outcome));
        let response = match forwarded.await {
            Ok(response) => response,
            Err(error) => {
                match error.source_side() {
                    ErrorSource::Client => debug!(%error, client.addr = %conn.peer, "Request refused"),
                    side => {
                        if let Some(suppressed) = self.0.failures.admit(&error.to_string()) {
                            warn!(%error, client.addr = %conn.peer, ?side, suppressed, "Request failed");
                        }
                    }
                }
                error.into_response()
            }
        };
        record.status = Some(response.status());
        response
    }

    async fn forward(
        &self,
        mut req: Request<ClientBody>,
        conn: ConnInfo,
        outcome: &mut Outcome,
    ) -> Result<Response<ResponseBody>, ProxyError> {
        let inner = &*self.0;
        check_method(req.method())?;
        check_target(&req)?;
        // `Some` only when normalising changed the path: what is matched is what is forwarded.
        let normalized = normalized_path_and_query(req.uri())?;
        let host = request_host(&req)?;
        outcome.host = Some(host.clone());
        let host_str = host.to_str().map_err(|_| ProxyError::MissingHost)?;
        let route = {
            let path = normalized.as_ref().map_or(req.uri().path(), PathAndQuery::path);
            let table = inner.routes.load();
            table.lookup_on(&normalize_host(host_str), path, conn.tls).cloned()
        };
        let route = route.ok_or_else(|| ProxyError::NoRoute {
            host: host_str.to_string(),
        })?;
        outcome.route = Some(route.clone());
        let root = PathAndQuery::from_static("/");
        if route.ssl_redirect && !conn.tls {
            let target = normalized.as_ref().or(req.uri().path_and_query()).unwrap_or(&root);
            return Ok(redirect::respond(&redirect::to_https(), false, host_str, target));
        }
        if let Some(redirect) = &route.redirect {
            let target = req.uri().path_and_query().unwrap_or(&root);
            return Ok(redirect::respond(redirect, conn.tls, host_str, target));
        }
        let upstream = route.upstream.clone();
        if upstream.endpoints.is_empty() {
            return Err(ProxyError::NoEndpoints {
                backend: upstream.id.clone(),
            });
        }
        let max_body = inner.options.max_body_size;
        if let Some(limit) = max_body
            && content_length(&req).is_some_and(|len| len > limit)
        {
            return Err(ProxyError::BodyTooLarge { limit });
        }

        let upgrade = if req.version() <= Version::HTTP_11 {
            upgrade_protocol(req.headers())
        } else {
            None
        };
        let client_upgrade = upgrade.as_ref().map(|_| hyper::upgrade::on(&mut req));

        let (parts, body) = req.into_parts();
        let method = parts.method;
        let mut headers = parts.headers;
        strip_hop_by_hop(&mut headers);
        let accepts_trailers = headers.contains_key(header::TE);
        let scheme = if conn.tls { "https" } else { "http" };
        // Up to seven forwarding fields, a route's protocol field and room to spare.
        let mut added = AddedFields::with_capacity(9);
        let request_id = set_forwarded(
            &mut headers,
            &ForwardedContext {
                peer: conn.peer.ip(),
                scheme,
                host: host_str,
            },
            &inner.options.trusted_proxies,
            &mut added,
        );
        // An HTTP/1.1 client's Host is the host already (its absolute-form target aside).
        if headers.get(header::HOST) != Some(&host) {
            headers.insert(header::HOST, host.clone());
        }
        if let Some(name) = &route.client_protocol_header {
            added.replace(&mut headers, name.clone(), HeaderValue::from_static(scheme));
        }
        if let Some(protocol) = &upgrade {
            headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
            headers.insert(header::UPGRADE, protocol.clone());
        }
        outcome.request_id = Some(request_id);
        let path_and_query = normalized.unwrap_or_else(|| {
            parts
                .uri
                .path_and_query()
                .cloned()
                .unwrap_or_else(|| PathAndQuery::from_static("/"))
        });
        // An HTTP/1 client's request was read alone: its write waits for the other ready ones.
        let write_at = if parts.version <= Version::HTTP_11 {
            WriteAt::AfterReadyConnections
        } else {
            WriteAt::Once
        };
        if upstream.protocol != UpstreamProtocol::H2c {
            join_cookies(&mut headers);
        }
        let (mut body, slot) = if http_body::Body::is_end_stream(&body) {
            (RequestBody::Empty, None)
        } else {
            let (body, slot) = RequestBody::stream(body, max_body, inner.options.client_body_timeout);
            (body, Some(slot))
        };
        let replay = |slot: &Option<Arc<BodySlot>>| match slot {
            None => Some(RequestBody::Empty),
            Some(slot) => RequestBody::resume(slot, max_body, inner.options.client_body_timeout),
        };

        let mut tried: Vec<usize> = Vec::new();
        let mut stale_retry_left = is_idempotent(&method);
        let mut unprocessed_retry_left = true;
        loop {
            let Some(index) = upstream.pick(&tried) else {
                return Err(ProxyError::NoEndpoints {
                    backend: upstream.id.clone(),
                });
            };
            let endpoint = upstream.endpoints[index].clone();
            outcome.endpoint = Some(endpoint.addr);
            let guard = EndpointGuard::new(endpoint.clone());
            let head = Outgoing {
                method: &method,
                uri: UpstreamClients::request_uri(upstream.protocol, &endpoint.authority, host_str, &path_and_query),
                headers: &headers,
                added: &added,
            };

            let sent = Instant::now();
            // Pinned here, so the timeout wraps a pointer: `timeout_at` takes its future by value
            // and would move the whole exchange (request, checkout, hyper's response future).
            let exchange = pin!(inner.clients.send(&upstream, &endpoint, &head, body, write_at));
            let error = match tokio::time::timeout_at(upstream_deadline(sent, inner.options.upstream_timeout), exchange)
                .await
            {
                Err(_elapsed) => {
                    return Err(ProxyError::UpstreamTimeout {
                        backend: upstream.id.clone(),
                        timeout: inner.options.upstream_timeout,
                    });
                }
                Ok(Ok(response)) => {
                    let answered = Instant::now();
                    outcome.answered = Some(answered);
                    upstream.stats.observe_latency((answered - sent).as_secs_f64());
                    let tunnels = &inner.options.tunnels;
                    return Ok(respond(response, guard, client_upgrade, accepts_trailers, tunnels));
                }
                Ok(Err(error)) => error,
            };
            drop(guard);
            // Who failed first: a client that went away is not the pod's fault.
            if slot.as_ref().is_some_and(|slot| slot.client_failed()) {
                return Err(ProxyError::ClientAborted);
            }
            if let Some(RequestBodyError::TooLarge { limit }) = find_in_chain::<RequestBodyError>(&error) {
                return Err(ProxyError::BodyTooLarge { limit: *limit });
            }
            if let UpstreamError::PoolTimeout(_) = error {
                upstream.stats.pool_timeout();
                return Err(ProxyError::PoolExhausted {
                    backend: upstream.id.clone(),
                });
            }
            if error.is_connect() {
                upstream.stats.connect_error();
                tried.push(index);
                let more = tried.len() < inner.options.connect_attempts.min(upstream.endpoints.len());
                if let (true, Some(next)) = (more, replay(&slot)) {
                    debug!(%error, endpoint = %endpoint.addr, backend = %upstream.id, "Connect failed, trying another endpoint");
                    body = next;
                    continue;
                }
                if chain_has(&error, |e: &io::Error| e.kind() == io::ErrorKind::TimedOut) {
                    return Err(ProxyError::ConnectTimeout {
                        backend: upstream.id.clone(),
                    });
                }
                return Err(ProxyError::Unreachable {
                    backend: upstream.id.clone(),
                    source: error,
                });
            }
            if unprocessed_retry_left
                && retry::never_processed(&error)
                && let Some(next) = replay(&slot)
            {
                debug!(%error, endpoint = %endpoint.addr, "Backend did not process the request, retrying once");
                unprocessed_retry_left = false;
                body = next;
                continue;
            }
            if let Some(RequestBodyError::Timeout { timeout }) = find_in_chain::<RequestBodyError>(&error) {
                return Err(ProxyError::BodyTimeout { timeout: *timeout });
            }
            if stale_retry_left
                && retry::is_stale_connection(&error)
                && let Some(next) = replay(&slot)
            {
                debug!(%error, endpoint = %endpoint.addr, "Pooled connection closed under us, retrying once");
                stale_retry_left = false;
                body = next;
                continue;
            }
            return Err(ProxyError::UpstreamFailed {
                backend: upstream.id.clone(),
                source: error,
            });
        }
    }
}

// === impl Record ===

impl Drop for Record<'_> {
    fn drop(&mut self) {
        let status = self.status.unwrap_or_else(|| {
            debug!(client.addr = %self.conn.peer, "Client went away before the response");
            CLIENT_CLOSED_REQUEST
        });
        let outcome = &self.outcome;
        let duration = outcome.answered.unwrap_or_else(Instant::now) - self.started;
        match &outcome.route {
            Some(route) => route.record(status, duration),
            None => self.proxy.0.metrics.unmatched().record(status, duration),
        }
        if let Some((method, uri)) = &self.logged {
            let host = outcome.host.as_ref().and_then(|h| h.to_str().ok()).unwrap_or("");
            info!(
                target: "shunt::access",
                client = %self.conn.peer.ip(),
                %method,
                host,
                path = uri.path(),
                status = status.as_u16(),
                route = outcome.route.as_ref().map_or("", |r| &*r.name),
                upstream = outcome.endpoint.map(|a| a.to_string()).unwrap_or_default(),
                duration_ms = duration.as_secs_f64() * 1000.0,
                request_id = outcome.request_id.as_ref().and_then(|v| v.to_str().ok()).unwrap_or(""),
                "Request",
            );
        }
    }
}

/// The upstream deadline counted from `sent`, a clock reading already taken (`timeout` would
/// take another).
fn upstream_deadline(sent: Instant, timeout: Duration) -> tokio::time::Instant {
    let sent = tokio::time::Instant::from_std(sent);
    // Past what the clock can say: thirty years stands for never, as in tokio's own `timeout`.
    sent.checked_add(timeout)
        .unwrap_or_else(|| sent + Duration::from_secs(30 * 365 * 86_400))
}

/// Turns the upstream's answer into ours: tunnels an accepted upgrade, otherwise strips
/// hop-by-hop headers and streams the body, holding the endpoint's in-flight count until done.
/// `Trailer` stays for a client that sent `TE: trailers`: hyper only writes HTTP/1.1 trailer
/// fields the response declared.
fn respond(
    mut response: Response<UpstreamBody>,
    guard: EndpointGuard,
    client_upgrade: Option<OnUpgrade>,
    accepts_trailers: bool,
    tunnels: &Tunnels,
) -> Response<ResponseBody> {
    if response.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(client_upgrade) = client_upgrade
    {
        let (parts, body) = response.into_parts();
        // The connection leaves the pool for good: it becomes the tunnel's.
        let upstream = match body {
            UpstreamBody::H1(body) => body.upgrade(),
            UpstreamBody::H2(_) => None,
        };
        tokio::spawn(tunnel(client_upgrade, upstream, guard, tunnels.clone()));
        return Response::from_parts(parts, ResponseBody::empty());
    }
    let declared: Vec<HeaderValue> = if accepts_trailers {
        response.headers().get_all(header::TRAILER).iter().cloned().collect()
    } else {
        Vec::new()
    };
    drop_length_beside_transfer_encoding(response.headers_mut());
    strip_hop_by_hop(response.headers_mut());
    for value in declared {
        response.headers_mut().append(header::TRAILER, value);
    }
    response.map(|body| ResponseBody::Upstream {
        body,
        _guard: Some(guard),
    })
}

async fn tunnel(client: OnUpgrade, upstream: Option<Upgraded>, guard: EndpointGuard, tunnels: Tunnels) {
    let endpoint = guard.endpoint().addr;
    let Some(upstream) = upstream else {
        debug!(%endpoint, "Upgrade did not complete: the pod's connection cannot be upgraded");
        return;
    };
    let client = match client.await {
        Ok(client) => client,
        Err(error) => {
            debug!(%error, %endpoint, "Upgrade did not complete");
            return;
        }
    };
    tunnels.run(TokioIo::new(client), upstream, endpoint).await;
    drop(guard);
}

/// The authority the caller asked for: the URI's (HTTP/2, absolute-form) or the Host header.
fn request_host(req: &Request<ClientBody>) -> Result<HeaderValue, ProxyError> {
    if let Some(authority) = req.uri().authority() {
        return HeaderValue::from_str(authority.as_str()).map_err(|_| ProxyError::MissingHost);
    }
    match req.headers().get(header::HOST) {
        Some(host) => Ok(host.clone()),
        // HTTP/1.0 may omit Host; it can still match rules without a host.
        None if req.version() == Version::HTTP_10 => Ok(HeaderValue::from_static("")),
        None => Err(ProxyError::MissingHost),
    }
}

fn content_length(req: &Request<ClientBody>) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future `make` returns, without making one.
    fn future_size<A, F>(_make: impl Fn(A) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn the_request_future_hyper_holds_is_a_pointer_because_serving_is_boxed() {
        let conn = ConnInfo {
            peer: "127.0.0.1:1".parse().unwrap(),
            tls: false,
        };
        let serve = future_size(|(proxy, req): (&'static Proxy, Request<ClientBody>)| proxy.serve(req, conn));
        // Every layer above (our handler, hyper's dispatcher) copies this future when it takes it.
        assert!(serve <= 16, "serve's future is {serve} bytes");
    }

    #[test]
    fn the_upstream_deadline_counts_from_the_send_and_survives_a_timeout_past_the_clock() {
        let sent = Instant::now();
        let deadline = upstream_deadline(sent, Duration::from_secs(60));
        assert_eq!(deadline.into_std() - sent, Duration::from_secs(60));
        // A timeout past what the clock can hold must not panic the request.
        let never = upstream_deadline(sent, Duration::MAX);
        assert!(never.into_std() - sent > Duration::from_secs(29 * 365 * 86_400));
    }
}
