//! ingress-nginx's custom error pages (`custom-http-errors`, `default-backend`): an answer with
//! a listed status, the pod's or the proxy's own 502/503/504, is replaced by the error
//! backend's answer to a request that says what failed (the template's `@custom_*` location).

use serde::Serialize;

use crate::{BackendId, PathSpec};

/// The statuses a route's error pages may list: what ingress-nginx's validator admits.
pub const ERROR_CODES: std::ops::RangeInclusive<u16> = 400..=599;

/// Where a route's listed statuses go, and what the error backend is told.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ErrorPages {
    /// Sorted, without repeats, each in [`ERROR_CODES`] (so at most 200). Must not be empty.
    pub codes: Vec<u16>,
    /// The error backend (the `default-backend` annotation's Service, else the global one);
    /// `None` is ingress-nginx's built-in default server, which answers 404 to every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendId>,
    /// The pod's answers are replaced too (nginx's `proxy_intercept_errors on`); otherwise
    /// only the proxy's own (a pod that cannot be reached or does not answer in time).
    pub intercept: bool,
    /// Sent as `X-Namespace`, `X-Ingress-Name`, `X-Service-Name` and `X-Service-Port`: the
    /// Ingress and the backend the route's location names (`$namespace` and the rest).
    pub location: ErrorLocation,
}

/// The location variables the error backend receives, as the Ingress writes them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ErrorLocation {
    pub namespace: String,
    pub ingress_name: String,
    pub service_name: String,
    /// The port number, or its name, as the Ingress's backend gives it.
    pub service_port: String,
}

impl ErrorPages {
    /// Whether an answer with `status` goes to the error backend.
    pub fn lists(&self, status: u16) -> bool {
        self.codes.binary_search(&status).is_ok()
    }
}

impl PathSpec {
    /// The error backend the route names besides its own, if any.
    pub fn error_backend(&self) -> Option<&BackendId> {
        self.options.error_pages.as_ref()?.backend.as_ref()
    }
}
