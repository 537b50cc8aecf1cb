//! Attempt: the tries against the route's endpoints. Each try picks an endpoint, sends the
//! prepared request under the upstream timeout and either responds or asks
//! [`retry::classify`] whether to go again. A route with a canary, a hash key or cookie
//! affinity has its [`Choice`] made first: which backend, and the endpoint its key or cookie
//! prefers; a new affinity cookie goes on the pod's answer.

use std::{
    pin::pin,
    sync::Arc,
    time::{Duration, Instant},
};

use http::{HeaderValue, Response, uri::PathAndQuery};
use tracing::debug;

use super::{
    Inner,
    access_log::Outcome,
    prepare,
    prepare::Prepared,
    respond,
    retry::{self, Decision, Retries},
    route,
};
use crate::{
    body::{RequestBody, ResponseBody},
    error::ProxyError,
    routes::{Route, normalize_host},
    spec::CookieAffinity,
    upstream::{
        Choice, EndpointGuard, Outgoing, RequestVars, RouteBalance, Sticky, Upstream, UpstreamClients, UpstreamError,
    },
};

pub(super) async fn attempt(
    inner: &Inner,
    route: &Arc<Route>,
    host: &str,
    choice: Option<Choice>,
    prepared: &mut Prepared,
    outcome: &mut Outcome,
) -> Result<Response<ResponseBody>, ProxyError> {
    let options = &inner.options;
    let mut target = Target::of(route, choice);
    let upstream = target.upstream;
    let mut body = std::mem::replace(&mut prepared.body, RequestBody::Empty);
    // A route's own timeouts (ingress-nginx's proxy-connect/read-timeout) replace the proxy's;
    // read from the route where used, so the loop holds no copy across its awaits.
    let timeouts = || route.rules.timeouts;
    let mut retries = Retries::new(
        &options.retry,
        options.connect_attempts,
        &prepared.method,
        &prepared.headers,
    );
    loop {
        let Some(index) = target.pick(&retries, options.slow_start) else {
            return Err(ProxyError::NoEndpoints {
                backend: upstream.id.clone(),
            });
        };
        let endpoint = upstream.endpoints[index].clone();
        outcome.endpoint = Some(endpoint.addr);
        outcome.attempts = retries.attempts();
        upstream.stats.tried(upstream.locality_of(index));
        let guard = EndpointGuard::new(endpoint.clone());
        let head = Outgoing {
            method: &prepared.method,
            uri: UpstreamClients::request_uri(upstream.protocol, &endpoint.authority, host, &prepared.path_and_query),
            headers: &prepared.headers,
            added: &prepared.added,
        };
        let sent = Instant::now();
        if retries.attempts() == 1 {
            upstream.budget.deposit(sent);
        }
        // Pinned here, so the timeout wraps a pointer: `timeout_at` takes its future by value
        // and would move the whole exchange (request, checkout, hyper's response future).
        let exchange = pin!(
            inner
                .clients
                .send(upstream, &endpoint, &head, body, prepared.write_at, timeouts())
        );
        let head_timeout = || timeouts().map_or(options.upstream_timeout, |t| t.read);
        let error = match tokio::time::timeout_at(upstream_deadline(sent, head_timeout()), exchange).await {
            Err(_elapsed) => UpstreamError::Timeout(head_timeout()),
            Ok(Ok(response)) => {
                let answered = Instant::now();
                outcome.answered = Some(answered);
                upstream.stats.observe_latency((answered - sent).as_secs_f64());
                let failed = options.retry.outlier.count_5xx && response.status().is_server_error();
                upstream.record_try(index, failed, &options.retry.outlier);
                let (upgrade, trailers) = (prepared.client_upgrade.take(), prepared.accepts_trailers);
                let read = timeouts().map(|t| t.read);
                let response = respond::respond(response, guard, (upgrade, trailers), read, &options.tunnels);
                return Ok(respond::with_cookies(response, target.cookies));
            }
            Ok(Err(error)) => error,
        };
        drop(guard);
        // Who failed first: a client that went away is not the pod's fault.
        let slot = &prepared.slot;
        let client_failed = slot.as_ref().is_some_and(|slot| slot.client_failed());
        let replay = || prepare::replay(slot, route, options);
        match retry::classify(error, upstream, index, &mut retries, client_failed, replay) {
            Decision::Retry { why, body: next, error } => {
                debug!(%error, endpoint = %endpoint.addr, backend = %upstream.id, "Retrying: {why}");
                body = next;
            }
            Decision::Fail(error) => return Err(error),
        }
    }
}

/// The upstream a request's tries go to, and what prefers one of its endpoints.
struct Target<'r> {
    upstream: &'r Upstream,
    /// The hash key's (`upstream-hash-by`).
    key: Option<u64>,
    /// The affinity cookie's, as sent.
    sticky: Option<(&'r CookieAffinity, Sticky)>,
    /// Affinity cookies this request's picks set; allocated only when one is.
    cookies: Vec<HeaderValue>,
}

impl<'r> Target<'r> {
    fn of(route: &'r Route, choice: Option<Choice>) -> Self {
        match (&route.rules.balance, choice) {
            (Some(balance), Some(choice)) => Target {
                upstream: balance.upstream(&route.upstream, choice),
                key: choice.key,
                sticky: balance.affinity.as_ref().zip(choice.sticky),
                cookies: Vec::new(),
            },
            _ => Target {
                upstream: &route.upstream,
                key: None,
                sticky: None,
                cookies: Vec::new(),
            },
        }
    }

    /// This try's endpoint: the affinity cookie's, the hash key's, else p2c. Endpoints failed
    /// on are avoided; when none is left, any but the unreachable ones.
    #[inline]
    fn pick(&mut self, retries: &Retries<'_>, slow_start: Option<Duration>) -> Option<usize> {
        let (upstream, tried) = (self.upstream, retries.tried());
        let cookies = &mut self.cookies;
        let stuck = (self.sticky).and_then(|(affinity, sticky)| sticky.pick(affinity, upstream, tried, cookies));
        let hashed = stuck.or_else(|| self.key.and_then(|key| upstream.pick_hashed(key, tried)));
        let pick = hashed.or_else(|| upstream.pick(tried, slow_start));
        pick.or_else(|| upstream.pick(retries.unreachable(), slow_start))
    }
}

/// Where a request of a route with a canary, hash key or affinity goes, from the request as it came.
pub(super) fn choose(balance: &RouteBalance, request: &route::Request<'_>) -> Choice {
    let req = request.req;
    let target = req.uri().path_and_query().map_or("/", PathAndQuery::as_str);
    let vars = RequestVars {
        headers: req.headers(),
        target,
        path: request.normalized.map_or(req.uri().path(), PathAndQuery::path),
        host: &normalize_host(request.host),
        peer: request.conn.peer.ip(),
    };
    balance.choose(&vars, request.conn.tls)
}

/// The upstream deadline counted from `sent`, a clock reading already taken (`timeout` would
/// take another).
pub(super) fn upstream_deadline(sent: Instant, timeout: Duration) -> tokio::time::Instant {
    let sent = tokio::time::Instant::from_std(sent);
    // Past what the clock can say: thirty years stands for never, as in tokio's own `timeout`.
    sent.checked_add(timeout)
        .unwrap_or_else(|| sent + Duration::from_secs(30 * 365 * 86_400))
}
