//! Route: find the route for the host and path, and answer here what needs no pod: redirects
//! (to HTTPS, or configured), a body declared too large (413), a caller the route's source
//! ranges refuse (403), a route without endpoints (503).

use std::sync::Arc;

use http::{Method, Response, header, uri::PathAndQuery};

use super::access_log::Outcome;
use crate::{
    body::{ClientBody, ResponseBody},
    error::ProxyError,
    publish::RouteReader,
    redirect,
    routes::{Route, normalize_host},
    server::ConnInfo,
};

/// The admitted request, as routing reads it.
pub(super) struct Request<'a> {
    pub req: &'a http::Request<ClientBody>,
    /// `Some` when normalising changed the path; see `admit`.
    pub normalized: Option<&'a PathAndQuery>,
    pub host: &'a str,
    pub conn: ConnInfo,
}

/// Whether the request goes on to a pod, or was answered here.
#[allow(
    clippy::large_enum_variant,
    reason = "returned once per request and matched at once; a box would allocate for every redirect"
)]
pub(super) enum Routed {
    Forward(Arc<Route>),
    Answered(Response<ResponseBody>),
}

#[inline(always)]
pub(super) fn route(
    routes: &RouteReader,
    request: &Request<'_>,
    max_body: Option<u64>,
    outcome: &mut Outcome,
) -> Result<Routed, ProxyError> {
    let Request {
        req,
        normalized,
        host,
        conn,
    } = *request;
    let route = {
        let path = normalized.map_or(req.uri().path(), PathAndQuery::path);
        let table = routes.load();
        table.lookup_on(&normalize_host(host), path, conn.tls).cloned()
    };
    let route = route.ok_or_else(|| ProxyError::NoRoute { host: host.to_string() })?;
    outcome.route = Some(route.clone());
    // Before any redirect, as nginx checks `client_max_body_size` when it picks the location.
    if let Some(limit) = route.rules.body_limit(max_body)
        && content_length(req).is_some_and(|len| len > limit)
    {
        return Err(ProxyError::BodyTooLarge { limit });
    }
    // The template's CORS `if`s run in the location's rewrite phase: after the body limit
    // (checked when the location is found), before lua_ingress.lua's HTTPS redirect (a
    // `rewrite_by_lua` handler runs last in that phase) and the location's later `return`.
    if let Some(cors) = &route.rules.cors
        && let Some(origin) = cors.allowed_origin(req.headers())
    {
        if req.method() == Method::OPTIONS {
            return Ok(Routed::Answered(cors.preflight(origin)));
        }
        outcome.cors_origin = Some(origin);
    }
    let root = PathAndQuery::from_static("/");
    if route.ssl_redirect && !conn.tls {
        let style = route.rules.https_redirect;
        let response = if style.trim_trailing_slash {
            // ingress-nginx's Location is built from the target as sent, not as normalised.
            let target = req.uri().path_and_query().unwrap_or(&root);
            redirect::to_https_trimmed(style.code, host, target)
        } else {
            let target = normalized.or(req.uri().path_and_query()).unwrap_or(&root);
            let mut to_https = redirect::to_https();
            to_https.code = style.code;
            redirect::respond(&to_https, false, host, target)
        };
        return Ok(Routed::Answered(response));
    }
    if let Some(redirect) = &route.redirect {
        let target = req.uri().path_and_query().unwrap_or(&root);
        return Ok(Routed::Answered(redirect::respond(redirect, conn.tls, host, target)));
    }
    // After the redirects, as nginx's access phase comes after its rewrite phase.
    if let Some(ranges) = &route.rules.source_ranges
        && !ranges.admits(conn.peer.ip())
    {
        return Err(ProxyError::SourceDenied);
    }
    if route.upstream.endpoints.is_empty() {
        return Err(ProxyError::NoEndpoints {
            backend: route.upstream.id.clone(),
        });
    }
    Ok(Routed::Forward(route))
}

fn content_length(req: &http::Request<ClientBody>) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}
