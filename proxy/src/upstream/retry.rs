//! Which upstream failures may be sent again, told apart by error type (never by text).
//!
//! - never processed (RFC 9113 §8.7): the pod refused the stream (`REFUSED_STREAM`), its
//!   graceful GOAWAY says it never saw it, or the connection closed before taking the request.
//!   Safe for any method.
//! - stale: a reused connection the pod closed as we wrote. The pod may have seen part of the
//!   request, so only idempotent methods go again.

use std::{error::Error as StdError, io};

use h2::Reason;

use super::h1::H1Error;

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
mod tests {
    use super::*;
    use crate::upstream::UpstreamError;

    fn mk_error(source: impl StdError + Send + Sync + 'static) -> UpstreamError {
        UpstreamError::Request(Box::new(source))
    }

    #[test]
    fn a_refused_reason_made_here_is_not_a_reset_from_the_pod() {
        let error = mk_error(h2::Error::from(Reason::REFUSED_STREAM));
        // `From<Reason>` builds a local reason, not a reset received from the pod.
        assert!(!never_processed(&error));
    }

    #[test]
    fn an_io_reset_is_stale_but_not_unprocessed() {
        let error = mk_error(io::Error::from(io::ErrorKind::ConnectionReset));
        assert!(is_stale_connection(&error));
        assert!(!never_processed(&error));
        assert!(!is_going_away(&error));
    }

    #[test]
    fn a_close_before_any_response_byte_is_stale_but_not_unprocessed() {
        let error = mk_error(H1Error::ClosedBeforeResponse);
        assert!(is_stale_connection(&error));
        assert!(!never_processed(&error));
    }

    #[test]
    fn a_connection_closed_before_the_request_was_written_is_never_processed() {
        let error = mk_error(H1Error::NotWritten(io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(never_processed(&error));
    }

    #[test]
    fn io_kinds_under_our_http1_errors_keep_their_meaning() {
        let reset = mk_error(H1Error::Io(io::Error::from(io::ErrorKind::ConnectionReset)));
        assert!(is_stale_connection(&reset));
        assert!(!never_processed(&reset));
        for error in [
            H1Error::Truncated,
            H1Error::HeadTooLarge,
            H1Error::Io(io::Error::other("boom")),
        ] {
            let error = mk_error(error);
            assert!(!is_stale_connection(&error), "{error}");
            assert!(!never_processed(&error), "{error}");
        }
    }

    #[test]
    fn an_unrelated_error_is_neither() {
        let error = mk_error(io::Error::other("boom"));
        assert!(!is_stale_connection(&error));
        assert!(!never_processed(&error));
    }
}
