//! External authentication (ingress-nginx's `auth-url`) as a route rule: the spec's
//! [`ExternalAuth`] with its values parsed once per table build, the auth service's addresses
//! (a name resolved as nginx's `resolver ... valid=30s` does, then kept 30 s), and the sign-in
//! redirect's `Location`. The request itself is the `auth` phase's (`proxy/auth.rs`).
//!
//! ```text
//! publish ─▶ AuthRule::new(spec)        (fields, target, method parsed; an IP needs no lookup)
//! request ─▶ cache::get(key)             (auth-cache-key: a kept answer, else ask)
//!         ─▶ AuthRule::addrs()          (lookup within the connect timeout, cached 30 s)
//!         ─▶ AuthRule::signin_location  (401 with auth-signin: the 302's Location)
//! ```

pub mod cache;
pub mod cache_key;
mod resolve;
mod signin;
mod stats;

use http::{HeaderName, HeaderValue, Method, uri::PathAndQuery};

pub(crate) use self::stats::STATS;
pub use self::stats::{AuthOutcome, register};
use crate::spec::{AuthTimeouts, ExternalAuth, Scheme, Signin};

/// A route's external authentication, ready for the request path.
#[derive(Debug)]
pub struct AuthRule {
    pub method: Method,
    /// `Host` of the auth request: the URL's host without port (authreq's `authURL.Hostname()`).
    pub host: HeaderValue,
    pub target: PathAndQuery,
    /// `auth-method` was given: `X-Original-URI` and `X-Scheme` are sent too.
    pub method_given: bool,
    /// Lowercase; set on the request to the pod from a 2xx answer.
    pub response_headers: Vec<HeaderName>,
    pub request_redirect: Option<HeaderValue>,
    /// `auth-proxy-set-headers`: set after the location's fields, replacing the caller's; an
    /// empty value only removes the caller's.
    pub set_headers: Vec<(HeaderName, HeaderValue)>,
    pub signin: Option<Signin>,
    pub always_set_cookie: bool,
    pub timeouts: AuthTimeouts,
    /// `Some` for `https`: the name the TLS handshake carries.
    pub tls_name: Option<std::sync::Arc<str>>,
    /// `auth-cache-key`: answers kept and reused.
    pub cache: Option<cache::CacheRule>,
    addrs: resolve::Addrs,
}

impl AuthRule {
    /// The rule `spec` asks for, or why a value cannot be sent.
    pub fn new(spec: &ExternalAuth) -> Result<Self, String> {
        let url = &spec.url;
        let method = match &spec.method {
            Some(method) => Method::from_bytes(method.as_bytes()).map_err(|_| format!("auth method {method:?}"))?,
            None => Method::GET,
        };
        let host = HeaderValue::from_str(&url.host).map_err(|_| format!("auth host {:?}", url.host))?;
        let target = PathAndQuery::try_from(url.path_and_query.as_str())
            .map_err(|_| format!("auth target {:?}", url.path_and_query))?;
        let response_headers = (spec.response_headers.iter())
            .map(|name| HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("auth response field {name:?}")))
            .collect::<Result<_, _>>()?;
        let request_redirect = (spec.request_redirect.as_deref())
            .map(|value| HeaderValue::from_str(value).map_err(|_| format!("auth request redirect {value:?}")))
            .transpose()?;
        let set_headers = (spec.set_headers.iter())
            .map(|(name, value)| {
                let field = (HeaderName::from_bytes(name.as_bytes()).ok()).zip(HeaderValue::from_str(value).ok());
                field.ok_or_else(|| format!("auth set field {name:?}: {value:?}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(AuthRule {
            method,
            host,
            target,
            method_given: spec.method.is_some(),
            response_headers,
            request_redirect,
            set_headers,
            signin: spec.signin.clone(),
            always_set_cookie: spec.always_set_cookie,
            timeouts: spec.timeouts,
            tls_name: (url.scheme == Scheme::Https).then(|| url.host.as_str().into()),
            cache: spec.cache.as_ref().map(cache::CacheRule::new),
            addrs: resolve::Addrs::new(&url.host, url.port),
        })
    }

    /// The auth service's addresses, resolved within `timeout` when its name needs it.
    pub async fn addrs(&self, timeout: std::time::Duration) -> Result<std::sync::Arc<[std::net::SocketAddr]>, String> {
        self.addrs.get(timeout).await
    }

    /// The sign-in redirect's `Location` for a request (see [`signin::location`]).
    pub fn signin_location(&self, request: &signin::SigninRequest<'_>) -> Option<HeaderValue> {
        self.signin
            .as_ref()
            .and_then(|signin| signin::location(signin, request))
    }
}

pub use self::signin::SigninRequest;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::AuthUrl;

    fn mk_spec(set_headers: &[(&str, &str)]) -> ExternalAuth {
        ExternalAuth {
            url: AuthUrl {
                scheme: Scheme::Http,
                host: "127.0.0.1".into(),
                port: 80,
                path_and_query: "/check".into(),
            },
            method: None,
            response_headers: Vec::new(),
            request_redirect: None,
            set_headers: set_headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            signin: None,
            always_set_cookie: false,
            timeouts: AuthTimeouts::default(),
            cache: None,
        }
    }

    #[test]
    fn set_fields_are_parsed_once_and_unsendable_ones_fail_the_rule() {
        let rule = AuthRule::new(&mk_spec(&[("X-Tenant", "blue"), ("X-Empty", "")])).unwrap();
        let fields: Vec<(&str, &[u8])> = (rule.set_headers.iter())
            .map(|(name, value)| (name.as_str(), value.as_bytes()))
            .collect();
        assert_eq!(fields, [("x-tenant", &b"blue"[..]), ("x-empty", &b""[..])]);
        assert!(AuthRule::new(&mk_spec(&[("X Bad", "v")])).is_err());
        assert!(AuthRule::new(&mk_spec(&[("X-Line", "a\nb")])).is_err());
    }
}
