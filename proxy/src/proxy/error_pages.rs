//! Error pages: ingress-nginx's `custom-http-errors`. An answer whose status the route lists,
//! the pod's or the proxy's own 502/503/504, is replaced by the error backend's answer to a
//! request saying what failed, as the template's `location @custom_<upstream>_<code>` sends it
//! (nginx's `error_page CODE = @custom_...`: the client gets the error backend's status).
//!
//! ```text
//! attempt ─▶ status listed? ──no──▶ respond as it is
//!                 └ yes: the pod's body dropped (its connection closed, nothing more read)
//!                      ─▶ METHOD / to the error backend: the client's fields, Host, X-Code, X-Format,
//!                         X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name,
//!                         X-Service-Port, X-Request-ID, X-Forwarded-For; path `/` with the client's
//!                         query; the client's body again
//!                         when it was kept (64 KiB), else none
//!                      ─▶ its answer, or the proxy's own 502/503/504 when it fails (never again
//!                         an error page: nginx's `recursive_error_pages` is off)
//! ```

use std::sync::Arc;

use http::{HeaderName, HeaderValue, Response, StatusCode, header, uri::PathAndQuery};
use tracing::debug;

use super::{Inner, access_log::Outcome, attempt, prepare::Prepared};
use crate::{
    body::RequestBody,
    error::{ErrorSource, ProxyError},
    headers::AddedFields,
    response_body::ResponseBody,
    routes::{ErrorRoute, Route},
    server::ConnInfo,
};

static X_CODE: HeaderName = HeaderName::from_static("x-code");
static X_FORMAT: HeaderName = HeaderName::from_static("x-format");
static X_ORIGINAL_URI: HeaderName = HeaderName::from_static("x-original-uri");
static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
static X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
/// In the order of [`ErrorRoute::location`].
static LOCATION: [HeaderName; 4] = [
    HeaderName::from_static("x-namespace"),
    HeaderName::from_static("x-ingress-name"),
    HeaderName::from_static("x-service-name"),
    HeaderName::from_static("x-service-port"),
];

/// What the error backend is told of the request, taken before prepare changes it.
pub(super) struct Failed<'r> {
    pub pages: &'r ErrorRoute,
    /// `$request_uri`: the target as the client sent it.
    pub target: Option<PathAndQuery>,
    /// `$best_http_host`: the client's Host.
    pub host: HeaderValue,
    pub conn: ConnInfo,
}

/// The answer the client gets: `answered`, or the error backend's when its status is listed.
pub(super) async fn intercept(
    inner: &Inner,
    route: &Arc<Route>,
    failed: Failed<'_>,
    host: &str,
    prepared: &mut Prepared,
    outcome: &mut Outcome,
    answered: Result<Response<ResponseBody>, ProxyError>,
) -> Result<Response<ResponseBody>, ProxyError> {
    let status = match &answered {
        // Without `proxy_intercept_errors`, nginx passes the pod's answers on as they are.
        Ok(response) if failed.pages.intercept => response.status(),
        Ok(_) => return answered,
        // A client's failure (its body, its leaving) is not the location's answer.
        Err(error) if error.source_side() != ErrorSource::Client => error.status(),
        Err(_) => return answered,
    };
    if !failed.pages.lists(status) {
        return answered;
    }
    if let Err(error) = &answered {
        debug!(%error, %status, route = %route.name, "Answering with the error backend");
    }
    outcome.error_page = true;
    outcome.cors_origin = None;
    // What follows is the error backend's answer (set again when it comes) or ours.
    outcome.answered = None;
    // The pod's body is not read: dropped, its connection closes instead of going back to the pool.
    drop(answered);
    let Some(upstream) = failed.pages.upstream.as_ref().filter(|u| !u.endpoints.is_empty()) else {
        // ingress-nginx's built-in default server (`location / { return 404; }`), also where a
        // default backend without endpoints leaves nginx: its page, made here.
        return Ok(not_found());
    };
    let mut request = error_request(inner, route, &failed, status, prepared, outcome);
    attempt::attempt_on(
        inner,
        route,
        (attempt::Target::to(upstream), [None, None]),
        host,
        &mut request,
        outcome,
    )
    .await
}

/// The request `location @custom_...` sends: the client's method and fields (the named location
/// keeps both), path `/` and the query (`rewrite (.*) / break`), the template's
/// `proxy_set_header` lines.
fn error_request(
    inner: &Inner,
    route: &Route,
    failed: &Failed<'_>,
    status: StatusCode,
    prepared: &Prepared,
    outcome: &Outcome,
) -> Prepared {
    let mut headers = prepared.headers.clone();
    // The body again from the start when it was kept whole; otherwise none goes, framed as none.
    let body = super::prepare::replay(&prepared.slot, route, &inner.options).unwrap_or_else(|| {
        headers.remove(header::CONTENT_LENGTH);
        headers.remove(header::TRANSFER_ENCODING);
        RequestBody::Empty
    });
    headers.insert(header::HOST, failed.host.clone());
    // nginx sends no field for an empty `proxy_set_header` value, and never the client's.
    let accept = headers.get(header::ACCEPT).filter(|v| !v.is_empty()).cloned();
    headers.remove(&X_FORMAT);
    let target = failed.target.as_ref().map_or("/", PathAndQuery::as_str);
    let peer = failed.conn.peer.ip().to_canonical().to_string();
    let fields = [
        (&X_CODE, Some(HeaderValue::from(status.as_u16()))),
        (&X_FORMAT, accept),
        (&X_ORIGINAL_URI, HeaderValue::from_str(target).ok()),
        (&X_REQUEST_ID, outcome.request_id.clone()),
        (&X_FORWARDED_FOR, HeaderValue::from_str(&peer).ok()),
    ];
    let location = LOCATION.iter().zip(failed.pages.location.iter().cloned().map(Some));
    let mut added = AddedFields::with_capacity(9);
    for (name, value) in fields.into_iter().chain(location) {
        if let Some(value) = value {
            added.replace(&mut headers, name.clone(), value);
        }
    }
    Prepared {
        method: prepared.method.clone(),
        headers,
        added,
        path_and_query: error_path(failed.target.as_ref()),
        write_at: prepared.write_at,
        accepts_trailers: prepared.accepts_trailers,
        client_upgrade: None,
        request_id: None,
        client_tls: prepared.client_tls,
        body,
        slot: prepared.slot.clone(),
    }
}

/// `rewrite (.*) / break`: the path `/`, the client's query kept (nginx appends `$args`).
fn error_path(target: Option<&PathAndQuery>) -> PathAndQuery {
    match target.and_then(PathAndQuery::query) {
        Some(query) => format!("/?{query}")
            .parse()
            .unwrap_or_else(|_| PathAndQuery::from_static("/")),
        None => PathAndQuery::from_static("/"),
    }
}

/// The built-in default server's answer; the route's answer style gives it nginx's page.
fn not_found() -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
