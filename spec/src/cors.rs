//! ingress-nginx's CORS (`enable-cors`) as a route behaviour: which origins are allowed and the
//! fields their answers get. The proxy answers the preflight and sets the fields.

use serde::Serialize;

/// A route's CORS as ingress-nginx's annotations give it (after its validation and defaults).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CorsSpec {
    pub allow_origin: AllowOrigin,
    /// `Access-Control-Allow-Methods`, verbatim.
    pub allow_methods: String,
    /// `Access-Control-Allow-Headers`, verbatim.
    pub allow_headers: String,
    /// `Access-Control-Allow-Credentials: true` is sent.
    pub allow_credentials: bool,
    /// `Access-Control-Expose-Headers`, verbatim; not sent when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expose_headers: Option<String>,
    /// `Access-Control-Max-Age`, in seconds, as Go prints an int.
    pub max_age: i64,
}

/// Which requests get CORS fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowOrigin {
    /// `*`: every request, with an Origin or not, answered `Access-Control-Allow-Origin: *`
    /// (the template's `set $http_origin *; set $cors 'true';`).
    Any,
    /// Origins such as `https://a.example`, `https://*.example:8443` or `null`, matched as the
    /// template's `if ($http_origin ~* ((o1)|(o2))$ )` does; the Origin is echoed. Must not be empty.
    List(Vec<String>),
}
