//! The request line and Host: methods a reverse proxy must not forward, a repeated Host, an
//! absolute-form target or `:authority` that disagrees with Host, userinfo, and the path to
//! route and forward.

use http::{HeaderValue, Method, Request, header, uri::PathAndQuery};

use super::path::{PathError, normalize_path};

/// What `Allow` says on a 405: every method except the two we refuse.
pub const ALLOWED_METHODS: &str = "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// CONNECT would open a tunnel to wherever the caller names; TRACE echoes headers such as
    /// cookies back to scripts (cross-site tracing). nginx refuses both with 405 too.
    #[error("method {0} is not allowed")]
    MethodNotAllowed(Method),
    #[error("request target authority {target:?} differs from host {host:?}")]
    AuthorityMismatch { target: String, host: String },
    #[error("userinfo in request authority")]
    Userinfo,
    /// RFC 9112 §3.2: a 400. Routing by one Host while the pod reads another would let a
    /// caller reach a site its rules never matched.
    #[error("more than one Host field")]
    DuplicateHost,
    #[error("invalid host {0:?}")]
    InvalidHost(String),
    #[error(transparent)]
    Path(#[from] PathError),
}

/// Refuses CONNECT and TRACE.
pub fn check_method(method: &Method) -> Result<(), TargetError> {
    if *method == Method::CONNECT || *method == Method::TRACE {
        return Err(TargetError::MethodNotAllowed(method.clone()));
    }
    Ok(())
}

/// Checks the authority a request names: at most one Host, no userinfo, and where both the
/// target (absolute form, or HTTP/2's `:authority`) and Host are present, they name the same
/// host and port.
pub fn check_target<B>(req: &Request<B>) -> Result<(), TargetError> {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err(TargetError::DuplicateHost);
    }
    if let Some(host) = host {
        check_host_value(host)?;
    }
    let Some(authority) = req.uri().authority() else {
        return Ok(());
    };
    if authority.as_str().contains('@') {
        return Err(TargetError::Userinfo);
    }
    let Some(host) = host else {
        return Ok(());
    };
    let default_port = if req.uri().scheme() == Some(&http::uri::Scheme::HTTPS) {
        443
    } else {
        80
    };
    let host = host.to_str().unwrap_or_default();
    if !same_authority(authority.as_str(), host, default_port) {
        return Err(TargetError::AuthorityMismatch {
            target: authority.as_str().to_string(),
            host: host.to_string(),
        });
    }
    Ok(())
}

/// Only what an authority may hold (RFC 3986 §3.2): a Host with spaces, quotes or `/` is
/// refused instead of being matched, logged or forwarded.
fn check_host_value(host: &HeaderValue) -> Result<(), TargetError> {
    let bytes = host.as_bytes();
    // One table lookup per byte: this runs on every request.
    if bytes.iter().all(|&b| AUTHORITY_BYTES[usize::from(b)]) {
        return Ok(());
    }
    if bytes.contains(&b'@') {
        return Err(TargetError::Userinfo);
    }
    Err(TargetError::InvalidHost(String::from_utf8_lossy(bytes).into_owned()))
}

/// Which bytes a Host may hold: unreserved, sub-delims, `%` (pct-encoded), `:` (port) and the
/// brackets of an IP literal. Not `@`: userinfo is refused apart, with its own error.
static AUTHORITY_BYTES: [bool; 256] = authority_bytes();

const fn authority_bytes() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < table.len() {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b':'
                    | b'['
                    | b']'
            );
        b += 1;
    }
    table
}

pub(crate) fn same_authority(a: &str, b: &str, default_port: u16) -> bool {
    let (a_host, a_port) = split_port(a);
    let (b_host, b_port) = split_port(b);
    a_host.eq_ignore_ascii_case(b_host) && a_port.unwrap_or(default_port) == b_port.unwrap_or(default_port)
}

/// `host[:port]` or `[v6][:port]`; a port that is not a number stays part of the host, so
/// it can only ever compare equal to the same text.
fn split_port(authority: &str) -> (&str, Option<u16>) {
    let after_bracket = authority.rfind(']').map_or(0, |i| i + 1);
    match authority[after_bracket..].rfind(':') {
        Some(colon) => {
            let colon = after_bracket + colon;
            match authority[colon + 1..].parse() {
                Ok(port) => (&authority[..colon], Some(port)),
                Err(_) => (authority, None),
            }
        }
        None => (authority, None),
    }
}

/// The path to route on and the path-and-query to forward, when normalising changed the path;
/// `None` when the request's own is already normal (nothing allocated).
pub fn normalized_path_and_query(uri: &http::Uri) -> Result<Option<PathAndQuery>, TargetError> {
    let path = match normalize_path(uri.path())? {
        std::borrow::Cow::Borrowed(_) => return Ok(None),
        std::borrow::Cow::Owned(path) => path,
    };
    let rebuilt = match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path,
    };
    // The normalised path only holds bytes the original did, or fewer, so it still parses.
    PathAndQuery::try_from(rebuilt)
        .map(Some)
        .map_err(|_| PathError::InvalidEscape.into())
}

#[cfg(test)]
mod tests;
