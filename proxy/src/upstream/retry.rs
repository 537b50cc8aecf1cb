//! Which upstream failures may be sent again, told apart by error type (never by text), and the
//! decision one failed try leads to ([`classify`]).
//!
//! - connect failed: nothing was sent, so another endpoint may take the request (any method),
//!   up to `--connect-attempts` endpoints.
//! - never processed (RFC 9113 §8.7): the pod refused the stream (`REFUSED_STREAM`), its
//!   graceful GOAWAY says it never saw it, or the connection closed before taking the request.
//!   Safe for any method, once.
//! - stale: a reused connection the pod closed as we wrote. The pod may have seen part of the
//!   request, so only idempotent methods go again, once.
//!
//! Each retry needs the request body again; a body already sent past what was kept cannot be.
use std::{error::Error as StdError, fmt, io};

use h2::Reason;
use http::Method;

use super::{Upstream, UpstreamError, h1::H1Error};
use crate::{
    body::{RequestBody, RequestBodyError},
    error::ProxyError,
};

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

/// Why a failed try is sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    ConnectFailed,
    NeverProcessed,
    StaleConnection,
}

/// The retries one request has left, and the endpoints it could not connect to.
#[derive(Debug)]
pub struct Retries {
    /// Indexes into the upstream's endpoints, for `Upstream::pick` to avoid.
    unreachable: Vec<usize>,
    /// Endpoints one request may try when connecting fails.
    connect_attempts: usize,
    never_processed: bool,
    stale: bool,
}

/// Decides what a failed try leads to; `replay` gives the body for another try, or `None` when
/// the body cannot be sent again (it is called only when a retry is otherwise allowed).
/// `client_failed`: reading the client's body failed, so the client, not the pod, went away.
pub fn classify(
    error: UpstreamError,
    upstream: &Upstream,
    endpoint: usize,
    retries: &mut Retries,
    client_failed: bool,
    mut replay: impl FnMut() -> Option<RequestBody>,
) -> Decision {
    let backend = || upstream.id.clone();
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
        return Decision::Fail(ProxyError::PoolExhausted { backend: backend() });
    }
    if error.is_connect() {
        upstream.stats.connect_error();
        retries.unreachable.push(endpoint);
        let more = retries.unreachable.len() < retries.connect_attempts.min(upstream.endpoints.len());
        if let (true, Some(body)) = (more, replay()) {
            return Decision::retry(Why::ConnectFailed, body, error);
        }
        if chain_has(&error, |e: &io::Error| e.kind() == io::ErrorKind::TimedOut) {
            return Decision::Fail(ProxyError::ConnectTimeout { backend: backend() });
        }
        return Decision::Fail(ProxyError::Unreachable {
            backend: backend(),
            source: error,
        });
    }
    if retries.never_processed
        && never_processed(&error)
        && let Some(body) = replay()
    {
        retries.never_processed = false;
        return Decision::retry(Why::NeverProcessed, body, error);
    }
    if let Some(RequestBodyError::Timeout { timeout }) = find_in_chain::<RequestBodyError>(&error) {
        return Decision::Fail(ProxyError::BodyTimeout { timeout: *timeout });
    }
    if retries.stale
        && is_stale_connection(&error)
        && let Some(body) = replay()
    {
        retries.stale = false;
        return Decision::retry(Why::StaleConnection, body, error);
    }
    Decision::Fail(ProxyError::UpstreamFailed {
        backend: backend(),
        source: error,
    })
}

impl Decision {
    fn retry(why: Why, body: RequestBody, error: UpstreamError) -> Self {
        Decision::Retry { why, body, error }
    }
}

impl Retries {
    /// A request's budget: `connect_attempts` endpoints, one retry of a request the pod never
    /// processed, and one of a stale connection when `method` is idempotent.
    pub fn new(connect_attempts: usize, method: &Method) -> Self {
        Retries {
            unreachable: Vec::new(),
            connect_attempts,
            never_processed: true,
            stale: is_idempotent(method),
        }
    }

    /// Endpoints this request could not connect to.
    pub fn unreachable(&self) -> &[usize] {
        &self.unreachable
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Why::ConnectFailed => "connect failed, trying another endpoint",
            Why::NeverProcessed => "the pod did not process the request, retrying once",
            Why::StaleConnection => "pooled connection closed under us, retrying once",
        })
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

/// The pod's connection is going away: new streams must go to a new one.
pub fn is_going_away(error: &(dyn StdError + 'static)) -> bool {
    chain_has(error, |e: &h2::Error| e.is_go_away())
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

pub fn chain_has<E: StdError + 'static>(error: &(dyn StdError + 'static), test: impl Fn(&E) -> bool) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.downcast_ref::<E>().is_some_and(&test) {
            return true;
        }
        current = error.source();
    }
    false
}

#[cfg(test)]
mod tests;
