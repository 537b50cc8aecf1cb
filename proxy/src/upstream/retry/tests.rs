use super::*;

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
