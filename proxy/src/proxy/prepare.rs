//! Prepare: the request as the pod will see it. Hop-by-hop fields out, the forwarding fields
//! (X-Forwarded-*, X-Request-Id) in, the route's header options and path rewrite, the upgrades and field names a
//! pod may see (see `headers::upgrade`, `headers::fields`), and the body behind a slot that later
//! attempts can replay, its trailers filtered.

use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Version, header, uri::PathAndQuery};
use hyper::upgrade::OnUpgrade;
use tracing::debug;

use super::{Inner, ProxyOptions};
use crate::{
    body::{BodySlot, ClientBody, RequestBody},
    headers::{
        AddedFields, ForwardedContext, NginxRequest, TrailerFilter, drop_underscored, forwarded_upgrade, join_cookies,
        set_forwarded, set_nginx_forwarded, strip_hop_by_hop,
    },
    routes::Route,
    server::ConnInfo,
    spec::{Forwarding, UpstreamProtocol},
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
    host: &HeaderValue,
    host_str: &str,
    route: &Route,
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
    let accepts_trailers = headers.contains_key(header::TE);
    // Up to seven forwarding fields, a route's protocol field and room to spare.
    let mut added = AddedFields::with_capacity(9);
    let request_id = match route.rules.forwarding {
        Forwarding::Standard => rewrite_headers(&mut headers, &mut added, host_str, route, conn, options),
        Forwarding::Nginx { original_uri } => {
            let request = NginxRequest {
                peer: conn.peer.ip(),
                tls: conn.tls,
                host,
                original_uri: original_uri.then(|| parts.uri.path_and_query().map_or("/", PathAndQuery::as_str)),
            };
            // nginx's proxy module sends neither (`ngx_http_proxy_headers`); its gRPC module
            // writes `te: trailers` itself.
            headers.remove(header::EXPECT);
            if route.upstream.protocol != UpstreamProtocol::H2c {
                headers.remove(header::TE);
            }
            set_nginx_forwarded(&mut headers, &request, &mut added)
        }
    };
    match &route.rules.upstream_host {
        Some(upstream_host) => {
            headers.insert(header::HOST, upstream_host.clone());
        }
        // An HTTP/1.1 client's Host is the host already (its absolute-form target aside).
        None if headers.get(header::HOST) != Some(host) => {
            headers.insert(header::HOST, host.clone());
        }
        None => {}
    }
    if let Some(protocol) = &upgrade {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, protocol.clone());
    }
    let mut path_and_query = normalized.unwrap_or_else(|| {
        parts
            .uri
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"))
    });
    if let Some(rewrite) = &route.rules.rewrite {
        if let Some(prefix) = rewrite.forwarded_prefix() {
            added.replace(
                &mut headers,
                HeaderName::from_static("x-forwarded-prefix"),
                prefix.clone(),
            );
        }
        if let Some(rewritten) = rewrite.apply(path_and_query.path(), path_and_query.query()) {
            path_and_query = rewritten;
        }
    }
    // An HTTP/1 client's request was read alone: its write waits for the other ready ones.
    let write_at = if parts.version <= Version::HTTP_11 {
        WriteAt::AfterReadyConnections
    } else {
        WriteAt::Once
    };
    if route.upstream.protocol != UpstreamProtocol::H2c {
        join_cookies(&mut headers);
    }
    let (body, slot) = if http_body::Body::is_end_stream(&body) {
        (RequestBody::Empty, None)
    } else {
        let trailers = trailers.unwrap_or_default();
        let limit = route.rules.body_limit(options.max_body_size);
        let (body, slot) = RequestBody::stream(body, limit, options.client_body_timeout, trailers);
        (body, Some(slot))
    };
    Prepared {
        method: parts.method,
        headers,
        added,
        path_and_query,
        write_at,
        accepts_trailers,
        client_upgrade,
        request_id: Some(request_id),
        body,
        slot,
    }
}

/// Removes what a pod must not see: hop-by-hop fields, `HTTP2-Settings` (hop-by-hop by
/// definition, RFC 9113 §3.2.1, even when `Connection` does not name it) and, unless allowed,
/// fields whose names hold `_`.
#[inline(always)]
fn strip_unintended_fields(headers: &mut HeaderMap, conn: ConnInfo, inner: &Inner) {
    strip_hop_by_hop(headers);
    headers.remove("http2-settings");
    if !inner.options.underscores_in_headers {
        let dropped = drop_underscored(headers);
        if dropped > 0 {
            debug!(client.addr = %conn.peer, dropped, "Dropped request fields with underscores");
            inner.metrics.dropped_fields(dropped);
        }
    }
}

/// shunt's own fields (the hop-by-hop ones are gone already): forwarding fields and the route's
/// protocol field. Returns the request's X-Request-Id.
#[inline(always)]
fn rewrite_headers(
    headers: &mut HeaderMap,
    added: &mut AddedFields,
    host_str: &str,
    route: &Route,
    conn: ConnInfo,
    options: &ProxyOptions,
) -> HeaderValue {
    let scheme = if conn.tls { "https" } else { "http" };
    let forwarded = ForwardedContext {
        peer: conn.peer.ip(),
        scheme,
        host: host_str,
    };
    let request_id = set_forwarded(headers, &forwarded, &options.trusted_proxies, added);
    if let Some(name) = &route.client_protocol_header {
        added.replace(headers, name.clone(), HeaderValue::from_static(scheme));
    }
    request_id
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
