//! The auth request's head, as the template's auth location writes it: the caller's fields
//! (`proxy_pass_request_headers on`) except those the location sets or clears, then the
//! location's own: X-Request-ID, X-Original-URL, X-Original-Method, X-Sent-From, X-Real-IP,
//! X-Forwarded-For, X-Auth-Request-Redirect, and with `auth-method` X-Original-URI and X-Scheme;
//! `Host` is the URL's host; then the `auth-proxy-set-headers` fields; no body, no
//! Content-Length, no X-Forwarded-Proto.

use http::{HeaderMap, HeaderName, HeaderValue, Uri};

use super::super::route::Request;
use crate::{
    auth::AuthRule,
    headers::{AddedFields, drop_underscored, join_cookies, new_request_id, strip_hop_by_hop},
    upstream::Outgoing,
};

/// Fields of the caller's the auth location does not pass: set or cleared by its
/// `proxy_set_header` lines, or by nginx's own defaults (`Connection`, `Keep-Alive`, `Expect`,
/// `Upgrade`, `TE`, `Transfer-Encoding`, which `strip_hop_by_hop` and this list remove).
const NOT_PASSED: [&str; 12] = [
    "content-length",
    "expect",
    "host",
    "x-auth-request-redirect",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-original-method",
    "x-original-url",
    "x-real-ip",
    "x-request-id",
    "x-sent-from",
    "upgrade",
];

/// The auth request, ready to send.
pub(super) struct Built {
    headers: HeaderMap,
    added: AddedFields,
    /// Made here when the caller sent no X-Request-ID.
    pub new_request_id: Option<HeaderValue>,
}

impl Built {
    pub(super) fn outgoing<'a>(&'a self, rule: &'a AuthRule) -> Outgoing<'a> {
        Outgoing {
            method: &rule.method,
            uri: Uri::from(rule.target.clone()),
            headers: &self.headers,
            added: &self.added,
            // The auth service is spoken to in its own protocol.
            client_tls: false,
        }
    }
}

pub(super) fn build(rule: &AuthRule, request: &Request<'_>, underscores: bool) -> Built {
    let req = request.req;
    let mut headers = req.headers().clone();
    strip_hop_by_hop(&mut headers);
    for name in NOT_PASSED {
        headers.remove(name);
    }
    if rule.method_given {
        headers.remove("x-original-uri");
        headers.remove("x-scheme");
    }
    if !underscores {
        drop_underscored(&mut headers);
    }
    // A `proxy_set_header` name is never passed from the caller, even with an empty value.
    for (name, _) in &rule.set_headers {
        headers.remove(name);
    }
    join_cookies(&mut headers);
    // `map $http_x_request_id $req_id`: the caller's, unless empty.
    let client_id = req.headers().get("x-request-id").filter(|id| !id.is_empty()).cloned();
    let new_id = client_id.is_none().then(new_request_id);
    let request_id = client_id.or_else(|| new_id.clone()).expect("one of the two is set");

    let tls = request.conn.tls;
    let scheme = if tls { "https" } else { "http" };
    let target = req.uri().path_and_query().map_or("/", |target| target.as_str());
    let peer = HeaderValue::from_str(&request.conn.peer.ip().to_canonical().to_string()).expect("an address");
    let text = |text: &str| HeaderValue::from_str(text).ok();
    let mut added = AddedFields::with_capacity(11 + rule.set_headers.len());
    let mut push = |name: &'static str, value: Option<HeaderValue>| {
        if let Some(value) = value {
            added.push(HeaderName::from_static(name), value);
        }
    };
    push("x-request-id", Some(request_id));
    if rule.method_given {
        push("x-original-uri", text(target));
        push("x-scheme", Some(HeaderValue::from_static(scheme)));
    }
    push("host", Some(rule.host.clone()));
    push("x-original-url", text(&format!("{scheme}://{}{target}", request.host)));
    push("x-original-method", text(req.method().as_str()));
    push(
        "x-sent-from",
        Some(HeaderValue::from_static("nginx-ingress-controller")),
    );
    push("x-real-ip", Some(peer.clone()));
    push("x-forwarded-for", Some(peer));
    let redirect = rule.request_redirect.clone().or_else(|| text(target));
    push("x-auth-request-redirect", redirect);
    for (name, value) in rule.set_headers.iter().filter(|(_, value)| !value.is_empty()) {
        added.push(name.clone(), value.clone());
    }
    Built {
        headers,
        added,
        new_request_id: new_id,
    }
}
