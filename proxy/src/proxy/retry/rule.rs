//! A route's own retry rules (nginx's `proxy_next_upstream*`, [`NextUpstream`]): which failed
//! tries go again, by nginx's conditions, instead of the proxy's `--retries`.
//!
//! ```text
//! failed try ─condition─▶ error | timeout | invalid_header ─set in the rule?─┐
//! answer head ─status listed?────────────────────────────────────────────────┤
//!                sent and POST/LOCK/PATCH without non_idempotent: no ─────────┤
//!                tries spent, or past the rule's time: no ────────────────────┴─▶ another try
//! ```
//!
//! nginx takes no budget from these retries, and neither does shunt: the tries are the bound.

use std::{io, time::Duration, time::Instant};

use http::{Method, StatusCode};

use super::{Retries, Why, find_in_chain, never_processed};
use crate::{
    body::{RequestBody, RequestBodyError},
    spec::NextUpstream,
    upstream::{Upstream, UpstreamError, chain_has, h1::H1Error},
};

/// nginx's failure kinds (`NGX_HTTP_UPSTREAM_FT_*`) a rule names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Condition {
    Error,
    Timeout,
    InvalidHeader,
}

/// A request's standing under a route's rule.
#[derive(Debug)]
pub(super) struct Ruled<'a> {
    pub(super) rule: &'a NextUpstream,
    /// The method may go again once sent ([`NextUpstream::resends`]).
    resends: bool,
    /// When the first try went out; read only when the rule has a time limit.
    started: Option<Instant>,
}

impl<'a> Ruled<'a> {
    pub(super) fn new(rule: &'a NextUpstream, method: &Method) -> Self {
        Ruled {
            rule,
            resends: rule.resends(method.as_str()),
            started: rule.within_secs.map(|_| Instant::now()),
        }
    }
}

impl Retries<'_> {
    /// Why `error` goes again under the route's rule, if it does.
    pub(super) fn ruled_reason(&mut self, error: &UpstreamError, endpoint: usize) -> Option<Why> {
        if error.is_connect() {
            self.unreachable.push(endpoint);
        }
        let ruled = self.ruled.as_ref()?;
        let (why, condition, sent) = condition(error)?;
        let named = match condition {
            Condition::Error => ruled.rule.error,
            Condition::Timeout => ruled.rule.timeout,
            Condition::InvalidHeader => ruled.rule.invalid_header,
        };
        (named && (!sent || ruled.resends) && self.try_left()).then_some(why)
    }

    /// Whether the rule allows one more try: tries not spent, and within its time.
    fn try_left(&self) -> bool {
        let Some(ruled) = &self.ruled else { return false };
        let within = |secs: u32| {
            ruled
                .started
                .is_none_or(|at| at.elapsed() < Duration::from_secs(u64::from(secs)))
        };
        self.attempts < ruled.rule.tries && ruled.rule.within_secs.is_none_or(within)
    }
}

/// The try that answered with `status` on `endpoint` is dropped and sent again when the route's
/// rule lists the status and allows another try; `replay` gives the body (`None`: it cannot be
/// sent again, and the answer stands).
pub fn on_status(
    retries: &mut Retries<'_>,
    upstream: &Upstream,
    endpoint: usize,
    status: StatusCode,
    replay: impl FnOnce() -> Option<RequestBody>,
) -> Option<RequestBody> {
    let ruled = retries.ruled.as_ref()?;
    if !ruled.rule.retries_status(status.as_u16()) || !ruled.resends || !retries.try_left() {
        return None;
    }
    let body = replay()?;
    retries.tried.push(endpoint);
    retries.took(Why::Status);
    upstream.stats.retried(Why::Status.as_label());
    Some(body)
}

/// The condition a failure before any response head is, why it would go again, and whether
/// the request may have reached the pod; `None` for failures that are the client's or ours.
fn condition(error: &UpstreamError) -> Option<(Why, Condition, bool)> {
    if error.is_connect() {
        let timed_out = chain_has(error, |e: &io::Error| e.kind() == io::ErrorKind::TimedOut);
        let condition = if timed_out {
            Condition::Timeout
        } else {
            Condition::Error
        };
        return Some((Why::ConnectFailed, condition, false));
    }
    if find_in_chain::<RequestBodyError>(error).is_some() {
        return None;
    }
    if let UpstreamError::Timeout(_) = error {
        return Some((Why::Timeout, Condition::Timeout, true));
    }
    if never_processed(error) {
        return Some((Why::NeverProcessed, Condition::Error, false));
    }
    match find_in_chain::<H1Error>(error) {
        Some(H1Error::SendTimeout(_)) => Some((Why::Timeout, Condition::Timeout, true)),
        Some(H1Error::InvalidHead(_) | H1Error::InvalidHeader(_) | H1Error::HeadTooLarge | H1Error::Framing(_)) => {
            Some((Why::InvalidHeader, Condition::InvalidHeader, true))
        }
        // The request's own framing, not the pod's doing.
        Some(H1Error::RequestBodyLength | H1Error::RequestContentLength | H1Error::UnexpectedSwitch) => None,
        // A reset, a close, any other failure to pass the request or read the head: `error`.
        _ => Some((Why::StaleConnection, Condition::Error, true)),
    }
}

#[cfg(test)]
mod tests;
