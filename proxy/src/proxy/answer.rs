//! Answer: what the route answers without a pod, and what it adds to every answer given for it,
//! the pod's or ours. In nginx's order, so a caller gets the answer ingress-nginx would give:
//!
//! ```text
//! route ─▶ answer: 413 body declared too large ─▶ CORS: preflight 204, or the allowed Origin kept
//!            ─▶ redirect (to HTTPS, configured) ─▶ 503 rate and requests-in-progress limits
//!            ─▶ 403 source ranges ─▶ 503 no endpoints (after `auth`, for a route with it) ─▶ prepare
//!
//! any answer for the route ─▶ finish: answer style (pages, the pod's server fields hidden),
//!                             HSTS on TLS, CORS fields for the kept Origin ─▶ client
//! ```

mod pages;

use std::sync::Arc;

use http::{HeaderValue, Response, header, uri::PathAndQuery};

use super::{access_log::Outcome, route::Request};
use crate::{
    body::ClientBody, cors::CorsAnswer, error::ProxyError, redirect, response_body::ResponseBody, routes::Route,
    spec::Forwarding,
};

/// Whether the request goes on to a pod, or was answered here.
#[allow(
    clippy::large_enum_variant,
    reason = "returned once per request and matched at once; a box would allocate for every redirect"
)]
pub(super) enum Answer {
    Forward(Arc<Route>),
    Answered(Response<ResponseBody>),
}

/// How the answers for a route look where they are not simply the pod's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AnswerStyle {
    /// Ours in plain text, the pod's as it sent them.
    Plain,
    /// Ours as HTML pages, and none of the pod's fields that name its server (see `pages`).
    Pages,
}

/// Answers here what needs no pod, or passes the route on to `prepare`.
#[inline(always)]
pub(super) fn answer(
    route: Arc<Route>,
    request: &Request<'_>,
    max_body: Option<u64>,
    outcome: &mut Outcome,
) -> Result<Answer, ProxyError> {
    let Request { req, conn, .. } = *request;
    // Before any redirect, as nginx checks `client_max_body_size` when it picks the location.
    if let Some(limit) = route.rules.body_limit(max_body)
        && content_length(req).is_some_and(|len| len > limit)
    {
        return Err(ProxyError::BodyTooLarge { limit });
    }
    if let Some(preflight) = cors(&route, req, outcome) {
        return Ok(Answer::Answered(preflight));
    }
    if let Some(redirect) = redirect(&route, request) {
        return Ok(Answer::Answered(redirect));
    }
    // nginx's preaccess phase: after the rewrite phase's redirects, before the access rules.
    if let Some(limiter) = &route.rules.limits {
        outcome.in_progress = limiter.admit(conn.peer.ip()).map_err(ProxyError::Limited)?;
    }
    // After the redirects, as nginx's access phase comes after its rewrite phase.
    if let Some(ranges) = &route.rules.source_ranges
        && !ranges.admits(conn.peer.ip())
    {
        return Err(ProxyError::SourceDenied);
    }
    // A split's backend is drawn next (`attempt::draw`), which checks its endpoints; with error
    // pages, the attempt's own 503 goes to them (nginx's `error_page` takes it too); with
    // external auth, it comes after the gate (`auth.rs`), as nginx asks the auth service first.
    let answered_later =
        route.rules.split.is_some() || route.rules.error_pages.is_some() || route.rules.external_auth.is_some();
    if route.upstream.endpoints.is_empty() && !answered_later {
        return Err(ProxyError::NoEndpoints {
            backend: route.upstream.id.clone(),
        });
    }
    Ok(Answer::Forward(route))
}

/// The preflight answered here (`cors.rs` says which requests are one); for another allowed
/// request, its Origin kept in `outcome` for `finish`.
///
/// The template's CORS `if`s run in the location's rewrite phase: after the body limit
/// (checked when the location is found), before lua_ingress.lua's HTTPS redirect (a
/// `rewrite_by_lua` handler runs last in that phase) and the location's later `return`.
#[inline(always)]
fn cors(route: &Route, req: &http::Request<ClientBody>, outcome: &mut Outcome) -> Option<Response<ResponseBody>> {
    let cors = route.rules.cors.as_ref()?;
    match cors.on_request(req.method(), req.headers())? {
        CorsAnswer::Preflight(preflight) => Some(preflight),
        CorsAnswer::Allowed(origin) => {
            outcome.cors_origin = Some(origin);
            None
        }
    }
}

/// The route's redirect: plain HTTP to HTTPS first, then the one it is configured with.
#[inline(always)]
fn redirect(route: &Route, request: &Request<'_>) -> Option<Response<ResponseBody>> {
    let (req, host, tls) = (request.req, request.host, request.conn.tls);
    let root = PathAndQuery::from_static("/");
    if route.ssl_redirect {
        // `use-forwarded-headers`: lua_ingress.lua's `redirect_to_https` reads the caller's
        // X-Forwarded-Proto (a request over TLS saying `http` is redirected, one over plain
        // HTTP saying `https` is not) and `redirect_host` its X-Forwarded-Host.
        let keys = route.rules.nginx_forwarding.as_deref();
        let proto = keys.and_then(|keys| keys.passed_proto(req.headers()));
        if proto.map_or(!tls, |proto| proto == "http") {
            let passed_host = keys.and_then(|keys| keys.passed_host(req.headers()));
            let host = passed_host.as_ref().and_then(|host| host.to_str().ok()).unwrap_or(host);
            return Some(to_https(route, request, host));
        }
    }
    let redirect = route.redirect.as_ref()?;
    if redirect.rewritten {
        // nginx's `rewrite` matches the normalised path ($uri) and appends the query as sent.
        let path = request
            .normalized
            .or(req.uri().path_and_query())
            .unwrap_or(&root)
            .path();
        let location = route.rules.rewrite.as_ref()?.location(path, req.uri().query())?;
        return Some(redirect::with_location_value(redirect.code, Some(location)));
    }
    let target = req.uri().path_and_query().unwrap_or(&root);
    let arrival = redirect::Arrival {
        tls,
        port: request.conn.port,
    };
    Some(redirect::respond(redirect, arrival, host, target))
}

/// The redirect of plain HTTP to HTTPS, in the route's style.
#[inline(always)]
fn to_https(route: &Route, request: &Request<'_>, host: &str) -> Response<ResponseBody> {
    let req = request.req;
    let root = PathAndQuery::from_static("/");
    let style = route.rules.https_redirect;
    if style.trim_trailing_slash {
        // ingress-nginx's Location is built from the target as sent, not as normalised.
        let target = req.uri().path_and_query().unwrap_or(&root);
        redirect::to_https_trimmed(style.code, host, target)
    } else {
        let target = request.normalized.or(req.uri().path_and_query()).unwrap_or(&root);
        let mut to_https = redirect::to_https();
        to_https.code = style.code;
        let arrival = redirect::Arrival { tls: false, port: None };
        redirect::respond(&to_https, arrival, host, target)
    }
}

fn content_length(req: &http::Request<ClientBody>) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// What the route adds to every answer given for it, from the pod or from us (a redirect, a
/// 413, a 502): its answer style, HSTS on the TLS listener, and the CORS fields for an Origin
/// `answer` allowed. `made_here`: no pod answered.
#[inline(always)]
pub(super) fn finish(
    response: &mut Response<ResponseBody>,
    route: &Route,
    tls: bool,
    made_here: bool,
    cors_origin: Option<HeaderValue>,
) {
    match AnswerStyle::of(route.rules.forwarding) {
        AnswerStyle::Plain => {}
        AnswerStyle::Pages if made_here => pages::as_page(response),
        AnswerStyle::Pages => pages::hide_server_fields(response.headers_mut()),
    }
    if tls && let Some(hsts) = &route.rules.hsts {
        response
            .headers_mut()
            .insert(http::header::STRICT_TRANSPORT_SECURITY, HeaderValue::clone(hsts));
    }
    // Set only when the route has CORS and allowed the Origin; not on a 413 for a declared
    // length, which nginx answers before the location's `if`s run.
    if let Some(origin) = cors_origin
        && let Some(cors) = &route.rules.cors
    {
        cors.set_fields(response.headers_mut(), origin);
    }
}

// === impl AnswerStyle ===

impl AnswerStyle {
    /// The style that goes with a route's forwarding fields: ingress-nginx's header filter runs
    /// on every answer of a location, and nginx writes its own page for those it makes.
    #[inline(always)]
    fn of(forwarding: Forwarding) -> Self {
        match forwarding {
            Forwarding::Standard => AnswerStyle::Plain,
            Forwarding::Nginx { .. } => AnswerStyle::Pages,
        }
    }
}
