//! Why a request failed, who failed, and the one mapping from failure to HTTP response.

use std::{sync::Arc, time::Duration};

use http::{HeaderValue, Response, StatusCode, header};

use crate::{
    limits::{LimitKind, Limited},
    request::{ALLOWED_METHODS, TargetError},
    response_body::ResponseBody,
    upstream::h1::H1Error,
};

#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("no route for host {host:?}")]
    NoRoute { host: String },
    #[error("missing Host header")]
    MissingHost,
    /// A method, request target, Host or path the proxy refuses before routing.
    #[error(transparent)]
    BadRequest(#[from] TargetError),
    #[error("request body exceeds {limit} bytes")]
    BodyTooLarge { limit: u64 },
    /// The route's source ranges do not admit the caller's address.
    #[error("client address not allowed by the route's source ranges")]
    SourceDenied,
    /// The route's rate or requests-in-progress limit for the caller's address.
    #[error("client address over the route's {} limit", match .0.kind { LimitKind::Rate => "rate", LimitKind::Connections => "connections" })]
    Limited(Limited),
    /// The route's auth service answered 401 (with these `WWW-Authenticate` challenges).
    #[error("the auth service refused the request (401)")]
    AuthUnauthorized { challenges: Vec<HeaderValue> },
    /// The route's auth service answered 403.
    #[error("the auth service refused the request (403)")]
    AuthForbidden,
    /// The route's auth service gave no answer that decides (down, slow, another status).
    #[error("external auth failed: {reason}")]
    AuthFailed { reason: String },
    #[error("request body stalled for {timeout:?}")]
    BodyTimeout { timeout: Duration },
    #[error("backend {backend} has no ready endpoints")]
    NoEndpoints { backend: Arc<str> },
    /// The route's split drew a backend reference that did not resolve, or all its weights are 0
    /// (Gateway API answers such a share with 500).
    #[error("no valid backend for this request's share of the route")]
    InvalidBackend,
    #[error("backend {backend} unreachable: {source}")]
    Unreachable {
        backend: Arc<str>,
        #[source]
        source: crate::upstream::UpstreamError,
    },
    #[error("backend {backend}: no free connection (all in use)")]
    PoolExhausted { backend: Arc<str> },
    /// The client went away before the response.
    #[error("client closed the request")]
    ClientAborted,
    /// The client's body broke its own framing (a bad chunk, a bad trailer section).
    #[error("malformed request body")]
    MalformedBody,
    #[error("backend {backend} connect timed out")]
    ConnectTimeout { backend: Arc<str> },
    #[error("backend {backend} did not answer within {timeout:?}")]
    UpstreamTimeout { backend: Arc<str>, timeout: Duration },
    #[error("backend {backend} failed: {source}")]
    UpstreamFailed {
        backend: Arc<str>,
        #[source]
        source: crate::upstream::UpstreamError,
    },
}

/// nginx's "client closed request": never sent (nobody is listening), only counted and logged.
pub const CLIENT_CLOSED_REQUEST: StatusCode = match StatusCode::from_u16(499) {
    Ok(status) => status,
    Err(_) => panic!("499 is a valid status code"),
};

/// Who caused a failure, for logs: the caller, a backend, or us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorSource {
    Client,
    Upstream,
    Proxy,
}

impl ProxyError {
    pub fn status(&self) -> StatusCode {
        match self {
            ProxyError::NoRoute { .. } => StatusCode::NOT_FOUND,
            ProxyError::MissingHost | ProxyError::MalformedBody => StatusCode::BAD_REQUEST,
            ProxyError::BadRequest(TargetError::MethodNotAllowed(_)) => StatusCode::METHOD_NOT_ALLOWED,
            ProxyError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ProxyError::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ProxyError::SourceDenied | ProxyError::AuthForbidden => StatusCode::FORBIDDEN,
            ProxyError::AuthUnauthorized { .. } => StatusCode::UNAUTHORIZED,
            ProxyError::AuthFailed { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            ProxyError::Limited(limited) => limited.status,
            ProxyError::BodyTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            ProxyError::NoEndpoints { .. } | ProxyError::PoolExhausted { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ProxyError::InvalidBackend => StatusCode::INTERNAL_SERVER_ERROR,
            ProxyError::ClientAborted => CLIENT_CLOSED_REQUEST,
            ProxyError::Unreachable { .. } | ProxyError::UpstreamFailed { .. } => StatusCode::BAD_GATEWAY,
            ProxyError::ConnectTimeout { .. } | ProxyError::UpstreamTimeout { .. } => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    pub fn source_side(&self) -> ErrorSource {
        match self {
            ProxyError::NoRoute { .. }
            | ProxyError::MissingHost
            | ProxyError::BadRequest(_)
            | ProxyError::BodyTooLarge { .. }
            | ProxyError::SourceDenied
            | ProxyError::AuthUnauthorized { .. }
            | ProxyError::AuthForbidden
            | ProxyError::Limited(_)
            | ProxyError::BodyTimeout { .. }
            | ProxyError::ClientAborted
            | ProxyError::MalformedBody => ErrorSource::Client,
            ProxyError::NoEndpoints { .. } | ProxyError::PoolExhausted { .. } | ProxyError::InvalidBackend => {
                ErrorSource::Proxy
            }
            _ => ErrorSource::Upstream,
        }
    }

    /// Whether the client's connection closes after this answer: what follows a malformed body
    /// on it cannot be framed with any trust, and a pod that switched protocols unasked (a
    /// refused `h2c` upgrade accepted anyway) must not see that client's next bytes either.
    pub fn closes_connection(&self) -> bool {
        match self {
            ProxyError::MalformedBody => true,
            ProxyError::UpstreamFailed { source, .. } => {
                let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source);
                while let Some(error) = cause {
                    if let Some(H1Error::UnexpectedSwitch) = error.downcast_ref::<H1Error>() {
                        return true;
                    }
                    cause = error.source();
                }
                false
            }
            _ => false,
        }
    }

    /// A short plain-text answer: the status line's reason and what failed, no internals.
    pub fn into_response(self) -> Response<ResponseBody> {
        let status = self.status();
        let reason = match &self {
            ProxyError::UpstreamFailed { backend, .. } => format!("backend {backend} failed"),
            ProxyError::Unreachable { backend, .. } => format!("backend {backend} unreachable"),
            ProxyError::AuthFailed { .. } => "external auth failed".to_string(),
            other => other.to_string(),
        };
        let mut response = plain_response(status, &reason);
        // auth_request passes the auth service's challenges on with its 401.
        if let ProxyError::AuthUnauthorized { challenges } = &self {
            for challenge in challenges {
                response
                    .headers_mut()
                    .append(header::WWW_AUTHENTICATE, challenge.clone());
            }
        }
        if status == StatusCode::METHOD_NOT_ALLOWED {
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(ALLOWED_METHODS));
        }
        if self.closes_connection() {
            // Both HTTP/1.1 servers close after a response that says so; HTTP/2 drops the field.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

pub fn plain_response(status: StatusCode, reason: &str) -> Response<ResponseBody> {
    let text = format!(
        "{} {}: {reason}\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let mut response = Response::new(ResponseBody::full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
