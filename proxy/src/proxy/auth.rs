//! Auth: external authentication, the template's `auth_request` location. After the access
//! rules (nginx's access phase runs `allow`/`deny` before `auth_request`), before `prepare`: a
//! request without body to the auth service with the fields the location sends; 2xx lets the
//! request go on with the named answer fields copied onto it, 401 answers 401 (or the sign-in
//! redirect), 403 answers 403, anything else, or no answer within the timeouts, 500.
//!
//! ```text
//! answer ─▶ Forward(route with auth) ─▶ auth: request (head) ─▶ 2xx ─▶ prepare (+ fields)
//!                                                            ├▶ 401 ─▶ 302 sign-in | 401
//!                                                            ├▶ 403 ─▶ 403
//!                                                            └▶ other, none ─▶ 500
//! ```
//!
//! With `auth-cache-key`, a kept answer for the request's key stands in for the auth request
//! (a hit costs the key's expansion, a 128-bit hash, one lock and a copy of the kept fields).

mod request;

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};
use http_body_util::BodyExt;

use super::{Inner, access_log::Outcome, route::Request};
use crate::{
    auth::{AuthOutcome, AuthRule, STATS, SigninRequest, cache, cache_key::KeyRequest},
    error::ProxyError,
    response_body::ResponseBody,
    routes::Route,
    upstream::auth::AuthKey,
};

/// Bytes of an auth answer's body read (and dropped) so its connection can serve the next one.
const MAX_DRAINED_BODY: usize = 64 * 1024;

/// The statuses nginx's `add_header` (without `always`) adds its field to.
const ADD_HEADER_STATUSES: [u16; 10] = [200, 201, 204, 206, 301, 302, 303, 304, 307, 308];

/// A request the auth service let through.
pub(super) struct Passed {
    /// Set on the request to the pod: the answer's value, or `None` to remove the caller's.
    pub fields: Vec<(HeaderName, Option<HeaderValue>)>,
    /// The X-Request-ID the auth request carried, made here: the pod sees the same one.
    pub new_request_id: Option<HeaderValue>,
}

/// A request the auth service did not let through.
pub(super) enum Refused {
    /// The sign-in redirect; boxed, as it is rare and the error path should stay small.
    Answer(Box<Response<ResponseBody>>),
    Error(ProxyError),
}

/// The auth answer's `Set-Cookie` (`auth_request_set $auth_cookie`), added to the answer the
/// caller gets (`add_header Set-Cookie $auth_cookie`, `always` with `auth-always-set-cookie`).
pub(super) struct AuthCookie {
    value: HeaderValue,
    always: bool,
}

impl Refused {
    pub(super) fn into_result(self) -> Result<Response<ResponseBody>, ProxyError> {
        match self {
            Refused::Answer(response) => Ok(*response),
            Refused::Error(error) => Err(error),
        }
    }
}

/// The auth phase of a route with `rule`: the auth service's verdict, then (as nginx's
/// balancer runs after the access phase) 503 for a route without endpoints.
pub(super) async fn gate(
    inner: &Inner,
    rule: &AuthRule,
    route: &Route,
    request: &Request<'_>,
    outcome: &mut Outcome,
) -> Result<Passed, Refused> {
    let passed = check(inner, rule, request, outcome).await?;
    if route.upstream.endpoints.is_empty() {
        let backend = route.upstream.id.clone();
        return Err(Refused::Error(ProxyError::NoEndpoints { backend }));
    }
    Ok(passed)
}

/// Asks the auth service about `request`.
async fn check(
    inner: &Inner,
    rule: &AuthRule,
    request: &Request<'_>,
    outcome: &mut Outcome,
) -> Result<Passed, Refused> {
    let cached = rule
        .cache
        .as_ref()
        .map(|cache| (cache, cache.key(&key_request(request))));
    if let Some(kept) = cached.and_then(|(_, key)| cache::get(key)) {
        let answer = HeaderMapWithStatus {
            status: kept.status,
            headers: kept.headers,
        };
        return judge(rule, request, answer, None);
    }
    let built = request::build(rule, request, inner.options.underscores_in_headers);
    let answer = match ask(inner, rule, &built).await {
        Ok(answer) => answer,
        Err(reason) => {
            STATS.record(AuthOutcome::Failed);
            return Err(Refused::Error(ProxyError::AuthFailed { reason }));
        }
    };
    if let Some((cache, key)) = cached
        && let Some(ttl) = cache.ttl(answer.status, &answer.headers)
        && let Some(kept) = cache::keep(answer.status, &answer.headers, &rule.response_headers)
    {
        cache::put(key, kept, ttl);
    }
    if let Some(value) = joined(&answer, &header::SET_COOKIE, "; ") {
        outcome.auth_cookie = Some(Box::new(AuthCookie {
            value,
            always: rule.always_set_cookie,
        }));
    }
    judge(rule, request, answer, built.new_request_id)
}

/// What the cache key's variables read.
fn key_request<'r>(request: &'r Request<'_>) -> KeyRequest<'r> {
    let req = request.req;
    KeyRequest {
        headers: req.headers(),
        http_host: request.host,
        request_uri: req.uri().path_and_query().map_or("/", |target| target.as_str()),
        method: req.method().as_str(),
        tls: request.conn.tls,
        peer: request.conn.peer.ip(),
    }
}

/// What the answer's status means for the request.
fn judge(
    rule: &AuthRule,
    request: &Request<'_>,
    answer: HeaderMapWithStatus,
    new_request_id: Option<HeaderValue>,
) -> Result<Passed, Refused> {
    match answer.status.as_u16() {
        200..=299 => {
            STATS.record(AuthOutcome::Allowed);
            let fields = (rule.response_headers.iter())
                .map(|name| (name.clone(), joined(&answer, name, ", ")))
                .collect();
            Ok(Passed { fields, new_request_id })
        }
        401 => {
            STATS.record(AuthOutcome::Unauthorized);
            // auth_request copies the challenges onto the request's answer before `error_page`
            // sends it to the sign-in location, so the redirect carries them too.
            let challenges: Vec<HeaderValue> = answer
                .headers
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .cloned()
                .collect();
            if rule.signin.is_none() {
                return Err(Refused::Error(ProxyError::AuthUnauthorized { challenges }));
            }
            match signin(rule, request) {
                Some(mut redirect) => {
                    for challenge in challenges {
                        redirect.headers_mut().append(header::WWW_AUTHENTICATE, challenge);
                    }
                    Err(Refused::Answer(Box::new(redirect)))
                }
                None => Err(Refused::Error(ProxyError::AuthFailed {
                    reason: "the sign-in URL is no field value".into(),
                })),
            }
        }
        403 => {
            STATS.record(AuthOutcome::Forbidden);
            Err(Refused::Error(ProxyError::AuthForbidden))
        }
        status => {
            STATS.record(AuthOutcome::Unexpected);
            let reason = format!("auth service answered {status}");
            Err(Refused::Error(ProxyError::AuthFailed { reason }))
        }
    }
}

/// The head of the auth service's answer.
struct HeaderMapWithStatus {
    status: StatusCode,
    headers: HeaderMap,
}

/// Sends the auth request and reads the answer, within the connect timeout (resolving,
/// connecting, a free connection) and then the read timeout (the answer, its body drained).
async fn ask(inner: &Inner, rule: &AuthRule, built: &request::Built) -> Result<HeaderMapWithStatus, String> {
    let cap = inner.options.external_auth_timeout;
    let (connect, read) = (rule.timeouts.connect.min(cap), rule.timeouts.read.min(cap));
    let addrs = rule.addrs(connect).await?;
    let addr = addrs[fastrand::usize(..addrs.len())];
    let key = AuthKey {
        addr,
        tls: rule.tls_name.clone(),
    };
    let exchange = async {
        let response = (inner.clients.send_auth(&key, &built.outgoing(rule), connect))
            .await
            .map_err(|error| format!("auth service {addr}: {error}"))?;
        let (parts, body) = response.into_parts();
        // Drained so the connection is reused; a longer body closes it instead.
        let limited = http_body_util::Limited::new(body, MAX_DRAINED_BODY);
        let _ = limited.collect().await;
        Ok(HeaderMapWithStatus {
            status: parts.status,
            headers: parts.headers,
        })
    };
    let deadline: Duration = connect + read;
    match tokio::time::timeout(deadline, exchange).await {
        Ok(result) => result,
        Err(_) => Err(format!("auth service {addr}: no answer within {deadline:?}")),
    }
}

/// Every value of `name` in the answer, joined as nginx's `$upstream_http_*` joins repeats.
fn joined(answer: &HeaderMapWithStatus, name: &HeaderName, separator: &str) -> Option<HeaderValue> {
    let mut values = answer.headers.get_all(name).iter().filter(|value| !value.is_empty());
    let first = values.next()?;
    let mut out = first.as_bytes().to_vec();
    for value in values {
        out.extend_from_slice(separator.as_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    HeaderValue::from_bytes(&out).ok()
}

/// The sign-in redirect: `error_page 401 = @signin`, whose `return 302` answers.
fn signin(rule: &AuthRule, request: &Request<'_>) -> Option<Response<ResponseBody>> {
    let target = request.req.uri().path_and_query().map_or("/", |target| target.as_str());
    let location = rule.signin_location(&SigninRequest {
        tls: request.conn.tls,
        http_host: request.host,
        request_uri: target,
    })?;
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::FOUND;
    response.headers_mut().insert(header::LOCATION, location);
    Some(response)
}

/// Sets the pod's request fields from the auth answer (nginx's `proxy_set_header NAME
/// $authHeaderN`: an empty value sends no field at all).
pub(super) fn apply(passed: Passed, headers: &mut HeaderMap) {
    for (name, value) in passed.fields {
        match value {
            Some(value) => {
                headers.insert(name, value);
            }
            None => {
                headers.remove(name);
            }
        }
    }
}

/// Adds the auth answer's cookie to the caller's answer, as `add_header` would.
pub(super) fn add_cookie(response: &mut Response<ResponseBody>, cookie: AuthCookie) {
    if cookie.always || ADD_HEADER_STATUSES.contains(&response.status().as_u16()) {
        response.headers_mut().append(header::SET_COOKIE, cookie.value);
    }
}
