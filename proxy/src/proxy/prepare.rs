//! Prepare: the request as the pod will see it. Hop-by-hop fields out, the route's set of
//! forwarding fields (X-Forwarded-*, X-Request-Id; see `forwarding`) in, the route's header
//! options and edits (then its split share's), its path rewrite or replacement, the upgrades
//! and field names a pod may see (see `headers::upgrade`, `headers::fields`), and the body
//! behind a slot that later attempts can replay, its trailers filtered.

mod forwarding;

use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Uri, Version, header, uri::PathAndQuery};
use hyper::upgrade::OnUpgrade;
use tracing::debug;

use self::forwarding::{FieldSet, Hop};
use super::{Inner, ProxyOptions, attempt::Drawn};
use crate::{
    body::{BodySlot, ClientBody, RequestBody},
    headers::{
        AddedFields, TrailerFilter, drop_underscored, forwarded_upgrade, has_field, join_cookies, strip_hop_by_hop,
    },
    routes::{Route, replace_path},
    server::ConnInfo,
    spec::PathReplacement,
    upstream::h1::WriteAt,
};

/// A request ready to go to any endpoint of its route, as often as the retries allow.
pub(super) struct Prepared {
    pub method: Method,
    pub headers: HeaderMap,
    /// Fields we added to `headers`, written apart by our HTTP/1.1 client.
    pub added: AddedFields,
    pub path_and_query: PathAndQuery,
    pub write_at: WriteAt,
    /// The client sent `TE: trailers`.
    pub accepts_trailers: bool,
    /// The client's side of an upgrade it asked for.
    pub client_upgrade: Option<OnUpgrade>,
    /// For the access log, which takes it.
    pub request_id: Option<HeaderValue>,
    /// The caller's connection is over TLS (an `AutoHttp` pod is spoken to alike).
    pub client_tls: bool,
    /// The first attempt's body; the attempts take it.
    pub body: RequestBody,
    /// Where later attempts get theirs; `None` for a request without a body.
    pub slot: Option<Arc<BodySlot>>,
}

// Always inlined, like the other phases before `attempt`: called once per request, and as a
// function of its own it would copy the request's parts in and the prepared request out.
#[inline(always)]
pub(super) fn prepare(
    mut req: Request<ClientBody>,
    normalized: Option<PathAndQuery>,
    (host, host_str): (&HeaderValue, &str),
    (route, drawn): (&Route, Option<Drawn<'_>>),
    conn: ConnInfo,
    inner: &Inner,
) -> Prepared {
    let options = &inner.options;
    // Any other upgrade goes with the hop-by-hop fields: the pod answers the request itself.
    let upgrade = forwarded_upgrade(req.headers(), req.version(), &options.allowed_upgrades);
    let client_upgrade = upgrade.as_ref().map(|_| hyper::upgrade::on(&mut req));

    let (parts, body) = req.into_parts();
    let mut headers = parts.headers;
    // Only a streamed body can end in trailers; the filter needs the head as the client sent it.
    let trailers = matches!(body, ClientBody::Hyper(_)).then(|| TrailerFilter::new(&headers));
    strip_unintended_fields(&mut headers, conn, inner);
    let accepts_trailers = has_field(&headers, &header::TE);
    // `use-forwarded-headers`: the caller's X-Forwarded-Host is the Host the pod sees.
    let passed_host = (route.rules.nginx_forwarding.as_deref()).and_then(|keys| keys.passed_host(&headers));
    let host = passed_host.as_ref().unwrap_or(host);
    // Up to seven forwarding fields, a route's protocol field and room to spare.
    let mut added = AddedFields::with_capacity(9);
    let hop = Hop {
        conn,
        host,
        host_str,
        target: parts.uri.path_and_query(),
    };
    let fields = FieldSet::of(route.rules.forwarding);
    let request_id = fields.apply(&mut headers, &mut added, &hop, route, options);
    set_host(&mut headers, route, host);
    edit_fields(&mut headers, &mut added, route, drawn);
    if let Some(protocol) = &upgrade {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, protocol.clone());
    }
    let path_and_query = upstream_target(normalized, &parts.uri, route, &mut headers, &mut added);
    // An HTTP/1 client's request was read alone: its write waits for the other ready ones.
    let write_at = if parts.version <= Version::HTTP_11 {
        WriteAt::AfterReadyConnections
    } else {
        WriteAt::Once
    };
    let upstream = drawn.map_or(&route.upstream, |drawn| drawn.upstream);
    if !upstream.protocol.is_h2() {
        join_cookies(&mut headers);
    }
    let (body, slot) = replayable_body(body, trailers, route, options);
    Prepared {
        method: parts.method,
        headers,
        added,
        path_and_query,
        write_at,
        accepts_trailers,
        client_upgrade,
        request_id: Some(request_id),
        client_tls: conn.tls,
        body,
        slot,
    }
}

/// The pod's `Host`: the route's, or the client's.
#[inline(always)]
fn set_host(headers: &mut HeaderMap, route: &Route, host: &HeaderValue) {
    match &route.rules.upstream_host {
        Some(upstream_host) => {
            headers.insert(header::HOST, HeaderValue::clone(upstream_host));
        }
        // An HTTP/1.1 client's Host is the host already (its absolute-form target aside).
        None if headers.get(header::HOST) != Some(host) => {
            headers.insert(header::HOST, host.clone());
        }
        None => {}
    }
}

/// The route's request header edits, then its split share's; after the forwarding fields, so
/// the route has the last word on the fields it names.
#[inline(always)]
fn edit_fields(headers: &mut HeaderMap, added: &mut AddedFields, route: &Route, drawn: Option<Drawn<'_>>) {
    if let Some(edits) = &route.rules.request_headers {
        edits.apply_to_request(headers, added);
    }
    if let Some(edits) = drawn.and_then(|drawn| drawn.target.request_headers.as_ref()) {
        edits.apply_to_request(headers, added);
    }
}

/// The path and query the pod sees: the request's as normalised, then the route's rewrite
/// (which may also send X-Forwarded-Prefix) or path replacement (which keeps the query).
#[inline(always)]
fn upstream_target(
    normalized: Option<PathAndQuery>,
    uri: &Uri,
    route: &Route,
    headers: &mut HeaderMap,
    added: &mut AddedFields,
) -> PathAndQuery {
    let mut path_and_query = normalized.unwrap_or_else(|| {
        uri.path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"))
    });
    if let Some(rewrite) = &route.rules.rewrite {
        if let Some(prefix) = rewrite.forwarded_prefix() {
            added.replace(headers, HeaderName::from_static("x-forwarded-prefix"), prefix.clone());
        }
        if let Some(rewritten) = rewrite.apply(path_and_query.path(), path_and_query.query()) {
            path_and_query = rewritten;
        }
    }
    if let Some(replacement) = &route.rules.path_replacement {
        path_and_query = replaced(replacement, &path_and_query);
    }
    path_and_query
}

/// `target` with its path replaced, its query kept; unchanged should the result not be a
/// valid target (the replacement's characters are the compile's to check).
fn replaced(replacement: &PathReplacement, target: &PathAndQuery) -> PathAndQuery {
    let path = replace_path(replacement, target.path());
    let mut out = String::with_capacity(path.len() + target.query().map_or(0, |query| query.len() + 1));
    out.push_str(&path);
    if let Some(query) = target.query() {
        out.push('?');
        out.push_str(query);
    }
    PathAndQuery::from_maybe_shared(bytes::Bytes::from(out)).unwrap_or_else(|_| target.clone())
}

/// The first attempt's body, and the slot later attempts replay it from (`None` without a body).
#[inline(always)]
fn replayable_body(
    body: ClientBody,
    trailers: Option<TrailerFilter>,
    route: &Route,
    options: &ProxyOptions,
) -> (RequestBody, Option<Arc<BodySlot>>) {
    if http_body::Body::is_end_stream(&body) {
        return (RequestBody::Empty, None);
    }
    let trailers = trailers.unwrap_or_default();
    let limit = route.rules.body_limit(options.max_body_size);
    let (body, slot) = RequestBody::stream(body, limit, options.client_body_timeout, trailers);
    (body, Some(slot))
}

/// Built once: a `&str` would be parsed into a name on every request.
static HTTP2_SETTINGS: HeaderName = HeaderName::from_static("http2-settings");

/// Removes what a pod must not see: hop-by-hop fields, `HTTP2-Settings` (hop-by-hop by
/// definition, RFC 9113 §3.2.1, even when `Connection` does not name it) and, unless allowed,
/// fields whose names hold `_`.
#[inline(always)]
fn strip_unintended_fields(headers: &mut HeaderMap, conn: ConnInfo, inner: &Inner) {
    strip_hop_by_hop(headers);
    if has_field(headers, &HTTP2_SETTINGS) {
        headers.remove(&HTTP2_SETTINGS);
    }
    if !inner.options.underscores_in_headers {
        let dropped = drop_underscored(headers);
        if dropped > 0 {
            debug!(client.addr = %conn.peer, dropped, "Dropped request fields with underscores");
            inner.metrics.dropped_fields(dropped);
        }
    }
}

/// The body for another attempt, from the start, or `None` when it cannot be sent again.
pub(super) fn replay(slot: &Option<Arc<BodySlot>>, route: &Route, options: &ProxyOptions) -> Option<RequestBody> {
    match slot {
        None => Some(RequestBody::Empty),
        Some(slot) => RequestBody::resume(
            slot,
            route.rules.body_limit(options.max_body_size),
            options.client_body_timeout,
        ),
    }
}
