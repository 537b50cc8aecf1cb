//! Admit: whether a request is one we forward at all, before any route is known: its method,
//! its request target, its path (normalised once, so what is matched is what is forwarded) and
//! the host it asks for.

use http::{HeaderValue, Request, Version, header, uri::PathAndQuery};

use crate::{
    body::ClientBody,
    error::ProxyError,
    request::{check_method, check_target, normalized_path_and_query},
};

/// What admitting a request found out about it.
pub(super) struct Admitted {
    /// `Some` only when normalising changed the path.
    pub normalized: Option<PathAndQuery>,
    /// The authority the client asked for; see [`request_host`].
    pub host: HeaderValue,
}

/// Refuses a request the proxy never forwards (400, 405), or says what it asks for.
#[inline(always)]
pub(super) fn admit(req: &Request<ClientBody>) -> Result<Admitted, ProxyError> {
    check_method(req.method())?;
    check_target(req)?;
    let normalized = normalized_path_and_query(req.uri())?;
    let host = request_host(req)?;
    Ok(Admitted { normalized, host })
}

/// The authority the caller asked for: the URI's (HTTP/2, absolute-form) or the Host header.
pub(super) fn request_host(req: &Request<ClientBody>) -> Result<HeaderValue, ProxyError> {
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
