//! Attempt: the tries against the route's endpoints. Each try picks an endpoint, sends the
//! prepared request under the upstream timeout and either responds or asks
//! [`retry::classify`] whether to go again. A route with a canary, a hash key or cookie
//! affinity has its [`Choice`] made first: which backend, and the endpoint its key or cookie
//! prefers; a new affinity cookie goes on the pod's answer. A route with a split has its share
//! drawn before that ([`draw`]).

use std::{
    future::Future,
    pin::{Pin, pin},
    sync::Arc,
    time::{Duration, Instant},
};

use http::{HeaderValue, Response, uri::PathAndQuery};
use tracing::debug;

use super::{
    Inner, ProxyOptions,
    access_log::Outcome,
    prepare,
    prepare::Prepared,
    respond,
    retry::{self, Decision, Retries},
    route,
};
use crate::{
    body::RequestBody,
    error::ProxyError,
    response_body::ResponseBody,
    routes::{HeaderEdits, Route, Split, SplitTarget, normalize_host},
    spec::{CookieAffinity, NextUpstream},
    upstream::{
        Choice, EndpointGuard, Outgoing, RequestVars, RouteBalance, Sticky, Upstream, UpstreamBody, UpstreamClients,
        UpstreamError,
    },
};

/// A split's share for one request: its backend's upstream and its own header edits.
#[derive(Clone, Copy)]
pub(super) struct Drawn<'r> {
    pub upstream: &'r Arc<Upstream>,
    pub target: &'r SplitTarget,
}

/// The split's share for this request: 500 for a reference that did not resolve or a split
/// whose weights are all 0, 503 for a backend without endpoints (as `answer` says for others).
fn draw(split: &Split) -> Result<Drawn<'_>, ProxyError> {
    let target = split.draw().ok_or(ProxyError::InvalidBackend)?;
    let upstream = target.upstream.as_ref().ok_or(ProxyError::InvalidBackend)?;
    if upstream.endpoints.is_empty() {
        return Err(ProxyError::NoEndpoints {
            backend: upstream.id.clone(),
        });
    }
    Ok(Drawn { upstream, target })
}

/// What a request's route picks before the request is taken apart: a split route's share (its
/// backend, or 500 for an invalid one) and, for a route with a canary, hash key or affinity,
/// its [`Choice`]; `None` for other routes.
pub(super) fn pick<'r>(
    route: &'r Route,
    request: &route::Request<'_>,
    outcome: &mut Outcome,
) -> Result<(Option<Drawn<'r>>, Option<Choice>), ProxyError> {
    let drawn = match route.rules.split.as_deref() {
        None => None,
        Some(split) => {
            let drawn = draw(split)?;
            outcome.split_upstream = Some(drawn.upstream.clone());
            Some(drawn)
        }
    };
    let choice = route.rules.balance.as_ref().map(|balance| choose(balance, request));
    Ok((drawn, choice))
}

pub(super) async fn attempt(
    inner: &Inner,
    (route, drawn): (&Arc<Route>, Option<Drawn<'_>>),
    host: &str,
    choice: Option<Choice>,
    prepared: &mut Prepared,
    outcome: &mut Outcome,
) -> Result<Response<ResponseBody>, ProxyError> {
    let target = Target::of(route, drawn, choice);
    let edits = response_edits(route, drawn);
    match route.rules.deadlines.as_deref().and_then(|deadlines| deadlines.request) {
        // Built in place: a future made before the match is moved (copied) into its arm.
        None => attempt_on(inner, route, (target, edits), host, prepared, outcome).await,
        Some(deadline) => {
            let backend = &target.upstream.id;
            let tries = attempt_on(inner, route, (target, edits), host, prepared, outcome);
            within_request_deadline(deadline, backend, Box::pin(tries)).await
        }
    }
}

/// HTTPRoute `timeouts.request`: every try within one deadline, then 504. The tries are boxed so
/// that routes without the deadline do not carry the timer in their future.
async fn within_request_deadline(
    deadline: Duration,
    backend: &Arc<str>,
    tries: Pin<Box<impl Future<Output = Result<Response<ResponseBody>, ProxyError>>>>,
) -> Result<Response<ResponseBody>, ProxyError> {
    match tokio::time::timeout(deadline, tries).await {
        Ok(answered) => answered,
        Err(_elapsed) => Err(ProxyError::UpstreamTimeout {
            backend: backend.clone(),
            timeout: deadline,
        }),
    }
}

/// The response edits an answer gets: the route's, then its split share's.
pub(super) type ResponseEdits<'r> = [Option<&'r HeaderEdits>; 2];

/// The tries against the target's upstream (the route's, its canary's, its split share's or its
/// error backend's).
pub(super) async fn attempt_on(
    inner: &Inner,
    route: &Arc<Route>,
    (mut target, edits): (Target<'_>, ResponseEdits<'_>),
    host: &str,
    prepared: &mut Prepared,
    outcome: &mut Outcome,
) -> Result<Response<ResponseBody>, ProxyError> {
    let options = &inner.options;
    let upstream = target.upstream;
    let mut body = std::mem::replace(&mut prepared.body, RequestBody::Empty);
    // A route's own timeouts (ingress-nginx's proxy-connect/read-timeout) replace the proxy's;
    // read from the route where used, so the loop holds no copy across its awaits.
    let timeouts = || route.rules.timeouts.as_deref().copied();
    let rule = route.rules.next_upstream.as_deref();
    let mut retries = retries_of(options, prepared, rule);
    loop {
        let Some(index) = target.pick(&retries, options.slow_start) else {
            return Err(ProxyError::NoEndpoints {
                backend: upstream.id.clone(),
            });
        };
        // Borrowed: the upstream outlives the tries; the guard holds the one counted reference.
        let endpoint = &upstream.endpoints[index];
        outcome.endpoint = Some(endpoint.addr);
        outcome.attempts = retries.attempts();
        upstream.stats.tried(upstream.locality_of(index));
        let guard = EndpointGuard::new(endpoint.clone());
        let head = Outgoing {
            method: &prepared.method,
            uri: UpstreamClients::request_uri(upstream.protocol, endpoint.addr, host, &prepared.path_and_query),
            headers: &prepared.headers,
            added: &prepared.added,
            client_tls: prepared.client_tls,
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
                .send(upstream, endpoint, &head, body, prepared.write_at, timeouts())
        );
        let head_timeout = || head_wait(route, options);
        let error = match tokio::time::timeout_at(upstream_deadline(sent, head_timeout()), exchange).await {
            Err(_elapsed) => UpstreamError::Timeout(head_timeout()),
            Ok(Ok(response)) => {
                record_answer((upstream, index), sent, response.status(), options, outcome);
                if rule.is_some()
                    && let Some(next) =
                        dropped_for_another_try(&mut retries, upstream, index, &response, prepared, route, options)
                {
                    debug!(endpoint = %endpoint.addr, backend = %upstream.id, status = %response.status(), "Retrying: {}", retry::Why::Status);
                    body = next;
                    continue;
                }
                let client = (prepared.client_upgrade.take(), prepared.accepts_trailers);
                let ours = (timeouts().map(|t| t.read), edits);
                let response = respond::respond(response, guard, client, ours, &options.tunnels);
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

/// How long one try waits for its answer's head: the route's read timeout or the proxy's,
/// under HTTPRoute `timeouts.backendRequest` (each try's own deadline) when that is shorter.
fn head_wait(route: &Route, options: &ProxyOptions) -> Duration {
    let read = (route.rules.timeouts.as_deref()).map_or(options.upstream_timeout, |t| t.read);
    let attempt = route.rules.deadlines.as_deref().and_then(|deadlines| deadlines.attempt);
    attempt.map_or(read, |attempt| attempt.min(read))
}

/// The request's retries: the proxy's policy, or the route's own rule.
fn retries_of<'a>(options: &'a ProxyOptions, prepared: &Prepared, rule: Option<&'a NextUpstream>) -> Retries<'a> {
    let (method, headers) = (&prepared.method, &prepared.headers);
    Retries::new(&options.retry, options.connect_attempts, method, headers).under(rule, method)
}

/// What an answer from the pod at `index` tells: its latency, and a 5xx for outlier detection.
fn record_answer(
    (upstream, index): (&Upstream, usize),
    sent: Instant,
    status: http::StatusCode,
    options: &ProxyOptions,
    outcome: &mut Outcome,
) {
    let answered = Instant::now();
    outcome.answered = Some(answered);
    upstream.stats.observe_latency((answered - sent).as_secs_f64());
    let failed = options.retry.outlier.count_5xx && status.is_server_error();
    upstream.record_try(index, failed, &options.retry.outlier);
}

/// The route's response header edits, then its split share's.
fn response_edits<'r>(route: &'r Route, drawn: Option<Drawn<'r>>) -> ResponseEdits<'r> {
    [
        route.rules.response_headers.as_deref(),
        drawn.and_then(|drawn| drawn.target.response_headers.as_ref()),
    ]
}

/// The body for another try when the route's rules retry this answer's status (nginx's
/// `proxy_next_upstream http_503` and the like); the answer is then dropped unread.
fn dropped_for_another_try(
    retries: &mut Retries<'_>,
    upstream: &Upstream,
    index: usize,
    response: &Response<UpstreamBody>,
    prepared: &Prepared,
    route: &Route,
    options: &ProxyOptions,
) -> Option<RequestBody> {
    let replay = || prepare::replay(&prepared.slot, route, options);
    retry::on_status(retries, upstream, index, response.status(), replay)
}

/// The upstream a request's tries go to, and what prefers one of its endpoints.
pub(super) struct Target<'r> {
    upstream: &'r Upstream,
    /// The hash key's (`upstream-hash-by`).
    key: Option<u64>,
    /// The affinity cookie's, as sent.
    sticky: Option<(&'r CookieAffinity, Sticky)>,
    /// Affinity cookies this request's picks set; allocated only when one is.
    cookies: Vec<HeaderValue>,
}

impl<'r> Target<'r> {
    /// The split's share or the route's backend, unless the canary takes the request.
    fn of(route: &'r Route, drawn: Option<Drawn<'r>>, choice: Option<Choice>) -> Self {
        let main = drawn.map_or(&route.upstream, |drawn| drawn.upstream);
        match (&route.rules.balance, choice) {
            (Some(balance), Some(choice)) => Target {
                upstream: balance.upstream(main, choice),
                key: choice.key,
                sticky: balance.affinity.as_ref().zip(choice.sticky),
                cookies: Vec::new(),
            },
            _ => Target::to(main),
        }
    }

    /// `upstream`'s endpoints by p2c alone (an error backend's).
    pub(super) fn to(upstream: &'r Upstream) -> Self {
        Target {
            upstream,
            key: None,
            sticky: None,
            cookies: Vec::new(),
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
fn choose(balance: &RouteBalance, request: &route::Request<'_>) -> Choice {
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
