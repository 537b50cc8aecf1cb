//! External authentication (ingress-nginx's `auth-url` and companions, nginx's `auth_request`):
//! before a request goes to a pod, a request without body to the auth service; 2xx lets it
//! through with the named fields of the answer copied onto it, 401 and 403 answer the caller
//! (401 as a redirect to the sign-in page when there is one), anything else, or no answer in
//! time, is 500.

use std::time::Duration;

use serde::Serialize;

use crate::{Scheme, options::is_false, timeouts::millis};

/// Fields of the auth service's answer copied onto the request at most.
pub const MAX_RESPONSE_HEADERS: usize = 32;
/// Bytes of a URL, a field name or a sign-in template at most.
pub const MAX_URL_LEN: usize = 2048;
/// Fields `auth-proxy-set-headers` sets on the auth request at most.
pub const MAX_AUTH_SET_HEADERS: usize = 64;
/// Bytes of those fields' names and values together at most.
pub const MAX_AUTH_SET_HEADERS_BYTES: usize = 16 * 1024;

/// One route's external authentication. Valid by construction when built by the controller's
/// parser: every part is within the limits above.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ExternalAuth {
    pub url: AuthUrl,
    /// `auth-method`: the auth request's method; with it, `X-Original-URI` and `X-Scheme` are
    /// sent too. `None`: the method of nginx's subrequest, GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Fields of a 2xx answer set on the request to the pod, replacing the caller's (a field the
    /// answer lacks is removed from the request, as nginx's empty `proxy_set_header` does).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub response_headers: Vec<String>,
    /// `X-Auth-Request-Redirect`'s value; `None`: the request target as the caller sent it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_redirect: Option<String>,
    /// `auth-proxy-set-headers`: fields set on the auth request after the location's own,
    /// replacing the caller's of the same name; an empty value only removes the caller's (nginx's
    /// empty `proxy_set_header`). Names distinct (case-insensitively), within the limits below.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_headers: Vec<(String, String)>,
    /// Where a 401 is redirected (302) instead of answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signin: Option<Signin>,
    /// The auth answer's `Set-Cookie` is added to every answer of the pod (nginx's
    /// `add_header ... always`), not only to 2xx and redirects.
    #[serde(skip_serializing_if = "is_false")]
    pub always_set_cookie: bool,
    pub timeouts: AuthTimeouts,
    /// `auth-cache-key`: answers kept and reused (see [`AuthCache`]); `None`: asked every time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<AuthCache>,
}

/// Parts of a cache key template at most.
pub const MAX_CACHE_KEY_PARTS: usize = 32;

/// The template's `proxy_cache auth_cache` on the auth location: an answer is reused for
/// requests whose key expands to the same text, within the time its status is kept.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AuthCache {
    /// `$server.Hostname` and the auth location's path (`/_external-auth-...`): the start of
    /// nginx's `$tmp_cache_key`, so locations never share answers.
    pub scope: String,
    /// `auth-cache-key`, expanded per request after `scope`.
    pub key: Vec<CacheKeyPart>,
    /// `proxy_cache_valid` lines, in order: the first naming an answer's status decides.
    pub valid: Vec<CacheValid>,
}

/// A piece of a cache key template: text, or an nginx variable of the request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKeyPart {
    Text(String),
    /// `$remote_user`: the user of a `Basic` Authorization.
    RemoteUser,
    /// `$host`: the request's host, lowercase, without port.
    Host,
    /// `$request_uri`: the request target as sent.
    RequestUri,
    /// `$request_method`.
    RequestMethod,
    /// `$scheme`: `http` or `https`.
    Scheme,
    /// `$remote_addr`: the caller's address.
    RemoteAddr,
    /// `$http_NAME`: the field NAME (lowercase, `_` read as `-`).
    Header(String),
    /// `$cookie_NAME`: the cookie NAME's value.
    Cookie(String),
}

/// `proxy_cache_valid [code ...] time`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct CacheValid {
    /// Statuses kept; empty: every status (`any`).
    pub codes: Vec<u16>,
    #[serde(serialize_with = "millis")]
    pub ttl: Duration,
}

/// An `http` or `https` URL without nginx variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AuthUrl {
    pub scheme: Scheme,
    /// A DNS name (resolved when asked, kept 30 s) or an IPv4 address, as written: it is also the
    /// auth request's `Host`.
    pub host: String,
    pub port: u16,
    /// Starts with `/`; sent as the auth request's target.
    pub path_and_query: String,
}

/// nginx's `proxy_connect_timeout` and `proxy_read_timeout` of the auth location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AuthTimeouts {
    /// Resolving the name and connecting, TLS included.
    #[serde(serialize_with = "millis")]
    pub connect: Duration,
    /// Sending the request and reading the whole answer.
    #[serde(serialize_with = "millis")]
    pub read: Duration,
}

/// The sign-in redirect's `Location`, as nginx expands its template (ingress-nginx's
/// `buildAuthSignURL`: the URL, with `rd=$pass_access_scheme://$http_host$escaped_request_uri`
/// added unless its query has the parameter).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Signin {
    /// Must not be empty.
    pub parts: Vec<SigninPart>,
}

/// A piece of the sign-in template.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SigninPart {
    Text(String),
    /// `$scheme`, `$pass_access_scheme`: `http` or `https`, by listener.
    Scheme,
    /// `$host`: the request's host, lowercase, without port.
    Host,
    /// `$http_host`: the `Host` field as sent.
    HttpHost,
    /// `$request_uri`: the request target as sent.
    RequestUri,
    /// `$escaped_request_uri`: the request target escaped by set-misc's `set_escape_uri`.
    EscapedRequestUri,
}

impl Default for AuthTimeouts {
    /// nginx's defaults: the auth location sets no proxy timeouts of its own.
    fn default() -> Self {
        AuthTimeouts {
            connect: crate::defaults::EXTERNAL_AUTH_TIMEOUT,
            read: crate::defaults::EXTERNAL_AUTH_TIMEOUT,
        }
    }
}

/// Whether set-misc's `set_escape_uri` escapes `byte` (its patched `NGX_ESCAPE_URI` table):
/// controls, space, `"#%&+/:;<=>?[\]^{}`, DEL and every byte above.
pub const fn escaped_in_uri(byte: u8) -> bool {
    byte <= b' '
        || byte >= 0x7f
        || matches!(
            byte,
            b'"' | b'#'
                | b'%'
                | b'&'
                | b'+'
                | b'/'
                | b':'
                | b';'
                | b'<'
                | b'='
                | b'>'
                | b'?'
                | b'['
                | b'\\'
                | b']'
                | b'^'
                | b'{'
                | b'}'
        )
}
