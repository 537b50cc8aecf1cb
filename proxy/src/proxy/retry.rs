//! Which upstream failures may be sent again, told apart by error type (never by text), and the
//! decision one failed try leads to ([`classify`]).
//!
//! - connect failed: nothing was sent, so another endpoint may take the request (any method),
//!   up to `--connect-attempts` endpoints.
//! - never processed (RFC 9113 §8.7): the pod refused the stream (`REFUSED_STREAM`), its
//!   graceful GOAWAY says it never saw it, or the connection closed before taking the request.
//!   Safe for any method, once.
//! - reset or closed before any response byte, or no response head within `--upstream-timeout`:
//!   the pod may have seen the request, so only idempotent ones (GET, HEAD, OPTIONS, TRACE, PUT,
//!   DELETE, or any carrying `Idempotency-Key`) go again, at most `--retries` times (nginx's
//!   `proxy_next_upstream error timeout`).
//!
//! Every retry goes to an endpoint this request has not tried (if one is left), needs the
//! upstream's retry budget ([`crate::upstream::budget`]; a failed connect, which sent nothing, does not) and
//! the request body again; a body already sent past what was kept
//! cannot be. A response head ends the tries: nothing is retried once the client may have a byte.
//! A failure that is the pod's counts towards its ejection ([`crate::upstream::health`]).
//!
//! A route with its own rules (nginx's `proxy_next_upstream*`) is decided by `rule.rs` instead.
use std::{error::Error as StdError, io, time::Instant};

use h2::Reason;
use http::{HeaderMap, Method};

use crate::upstream::{Upstream, UpstreamError, chain_has, h1::H1Error};
use crate::{
    body::{RequestBody, RequestBodyError},
    error::ProxyError,
    spec::{NextUpstream, RetryPolicy},
};

mod rule;
pub use rule::on_status;

/// Why a failed try is sent again (the contract's word, also a metric label).
pub use crate::spec::RetryReason as Why;

/// What one failed try leads to.
pub enum Decision {
    /// Send again (to the endpoint `Upstream::pick` chooses next) with this body.
    Retry {
        why: Why,
        body: RequestBody,
        error: UpstreamError,
    },
    /// Give up: the answer is this error's.
    Fail(ProxyError),
}

/// The retries one request has left, and the endpoints it failed on.
#[derive(Debug)]
pub struct Retries<'a> {
    policy: &'a RetryPolicy,
    /// Endpoints one request may try when connecting fails.
    connect_attempts: usize,
    /// Indexes into the upstream's endpoints, for `Upstream::pick` to avoid.
    tried: Vec<usize>,
    /// The endpoints of `tried` that refused or timed out the connect: never tried again.
    unreachable: Vec<usize>,
    /// Resets and timeouts this request may still retry (0 unless idempotent).
    left: usize,
    never_processed: bool,
    /// Tries sent so far, the first included.
    attempts: u32,
    /// The route's own rules, which replace all of the above but the endpoints tried.
    ruled: Option<rule::Ruled<'a>>,
}

/// Decides what a failed try leads to; `replay` gives the body for another try, or `None` when
/// the body cannot be sent again (it is called only when a retry is otherwise allowed).
/// `client_failed`: reading the client's body failed, so the client, not the pod, went away.
pub fn classify(
    error: UpstreamError,
    upstream: &Upstream,
    endpoint: usize,
    retries: &mut Retries<'_>,
    client_failed: bool,
    replay: impl FnOnce() -> Option<RequestBody>,
) -> Decision {
    if let Some(RequestBodyError::Malformed(_)) = find_in_chain::<RequestBodyError>(&error) {
        return Decision::Fail(ProxyError::MalformedBody);
    }
    if client_failed {
        return Decision::Fail(ProxyError::ClientAborted);
    }
    if let Some(RequestBodyError::TooLarge { limit }) = find_in_chain::<RequestBodyError>(&error) {
        return Decision::Fail(ProxyError::BodyTooLarge { limit: *limit });
    }
    if let UpstreamError::PoolTimeout(_) = error {
        upstream.stats.pool_timeout();
        return Decision::Fail(ProxyError::PoolExhausted {
            backend: upstream.id.clone(),
        });
    }
    if error.is_connect() {
        upstream.stats.connect_error();
    }
    let why = retries.reason(&error, endpoint, upstream.endpoints.len());
    if blames_endpoint(&error) {
        upstream.record_try(endpoint, true, &retries.policy.outlier);
    }
    retries.tried.push(endpoint);
    // A failed connect sent nothing, so its retry adds no load to any pod: outside the budget.
    let unbudgeted = |why: Why| why == Why::ConnectFailed || retries.ruled.is_some();
    if let Some(why) = why
        && (unbudgeted(why) || upstream.budget.withdraw(Instant::now(), &retries.policy.budget))
        && let Some(body) = replay()
    {
        retries.took(why);
        upstream.stats.retried(why.as_label());
        return Decision::Retry { why, body, error };
    }
    Decision::Fail(give_up(error, upstream))
}

/// The answer to a failure nothing more is tried for.
fn give_up(error: UpstreamError, upstream: &Upstream) -> ProxyError {
    let backend = upstream.id.clone();
    match error {
        UpstreamError::Timeout(timeout) => ProxyError::UpstreamTimeout { backend, timeout },
        error if error.is_connect() && chain_has(&error, |e: &io::Error| e.kind() == io::ErrorKind::TimedOut) => {
            ProxyError::ConnectTimeout { backend }
        }
        error if error.is_connect() => ProxyError::Unreachable { backend, source: error },
        error => match find_in_chain::<RequestBodyError>(&error) {
            Some(RequestBodyError::Timeout { timeout }) => ProxyError::BodyTimeout { timeout: *timeout },
            _ => ProxyError::UpstreamFailed { backend, source: error },
        },
    }
}

/// Whether the failure is the endpoint's doing (it counts towards ejecting it).
fn blames_endpoint(error: &UpstreamError) -> bool {
    match error {
        UpstreamError::Connect(_) | UpstreamError::Timeout(_) => true,
        UpstreamError::PoolTimeout(_) => false,
        UpstreamError::Request(_) => {
            find_in_chain::<RequestBodyError>(error).is_none() && (is_stale_connection(error) || never_processed(error))
        }
    }
}

impl<'a> Retries<'a> {
    /// A request's retries under `policy`: idempotent ones (by `method` or an `Idempotency-Key`
    /// in `headers`) may be retried after a reset or a timeout.
    /// `connect_attempts`: endpoints one request may try when connecting fails.
    pub fn new(policy: &'a RetryPolicy, connect_attempts: usize, method: &Method, headers: &HeaderMap) -> Self {
        let idempotent = is_idempotent(method) || headers.contains_key("idempotency-key");
        Retries {
            policy,
            connect_attempts,
            tried: Vec::new(),
            unreachable: Vec::new(),
            left: if idempotent { policy.retries } else { 0 },
            never_processed: true,
            attempts: 1,
            ruled: None,
        }
    }

    /// The request follows the route's `rule` instead of the proxy's retries.
    pub fn under(mut self, rule: Option<&'a NextUpstream>, method: &Method) -> Self {
        self.ruled = rule.map(|rule| rule::Ruled::new(rule, method));
        self
    }

    /// Endpoints this request failed on, for the next pick to avoid.
    pub fn tried(&self) -> &[usize] {
        &self.tried
    }

    /// Endpoints this request could not connect to: avoided even when every endpoint was tried.
    pub fn unreachable(&self) -> &[usize] {
        &self.unreachable
    }

    /// Tries sent so far, the first included.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Why `error` may be retried under this request's rules, before the budget is asked.
    fn reason(&mut self, error: &UpstreamError, endpoint: usize, endpoints: usize) -> Option<Why> {
        if self.ruled.is_some() {
            return self.ruled_reason(error, endpoint);
        }
        if error.is_connect() {
            self.unreachable.push(endpoint);
            let more = self.unreachable.len() < self.connect_attempts.min(endpoints);
            return more.then_some(Why::ConnectFailed);
        }
        if self.never_processed && never_processed(error) {
            return Some(Why::NeverProcessed);
        }
        if let Some(RequestBodyError::Timeout { .. }) = find_in_chain::<RequestBodyError>(error) {
            return None;
        }
        // With every endpoint tried, the next try goes to one that is not unreachable again.
        if self.left == 0 {
            return None;
        }
        match error {
            UpstreamError::Timeout(_) => Some(Why::Timeout),
            error if is_stale_connection(error) => Some(Why::StaleConnection),
            _ => None,
        }
    }

    /// Counts a retry granted for `why`.
    fn took(&mut self, why: Why) {
        self.attempts += 1;
        if self.ruled.is_some() {
            return;
        }
        match why {
            Why::ConnectFailed | Why::InvalidHeader | Why::Status => {}
            Why::NeverProcessed => self.never_processed = false,
            Why::StaleConnection | Why::Timeout => self.left -= 1,
        }
    }
}

fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

/// The request never reached the application on the pod; see the module docs.
pub fn never_processed(error: &(dyn StdError + 'static)) -> bool {
    chain_has(error, |e: &h2::Error| {
        let refused = e.is_reset() && e.is_remote() && e.reason() == Some(Reason::REFUSED_STREAM);
        // A GOAWAY with an error code may cut streams the pod did process; only a graceful
        // one (NO_ERROR) vouches for the streams it names as unprocessed.
        let goaway = e.is_go_away() && e.is_remote() && e.reason() == Some(Reason::NO_ERROR);
        refused || goaway
    }) || chain_has(error, |e: &hyper::Error| e.is_canceled())
        || chain_has(error, |e: &H1Error| matches!(e, H1Error::NotWritten(_)))
}

/// A reused connection the backend closed as we wrote to it: nothing of a response came back.
pub fn is_stale_connection(error: &(dyn StdError + 'static)) -> bool {
    chain_has(error, |e: &H1Error| matches!(e, H1Error::ClosedBeforeResponse))
        || chain_has(error, |e: &io::Error| {
            matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionAborted
            )
        })
}

pub fn find_in_chain<'a, E: StdError + 'static>(error: &'a (dyn StdError + 'static)) -> Option<&'a E> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(found) = error.downcast_ref::<E>() {
            return Some(found);
        }
        current = error.source();
    }
    None
}

#[cfg(test)]
mod tests;
