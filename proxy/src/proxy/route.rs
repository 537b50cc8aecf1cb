//! Route: find the route for the host and path, on the listener the request came to (and, on a
//! ranked host, the method, fields and query its paths' conditions read); what the route then
//! answers without a pod is `answer`'s.

use std::{net::SocketAddr, sync::Arc};

use http::uri::PathAndQuery;

use super::access_log::Outcome;
use crate::{
    body::ClientBody,
    error::ProxyError,
    publish::RouteReader,
    routes::{RequestFacts, Route, normalize_host},
    server::ConnInfo,
};

/// The admitted request, as routing and answering read it.
pub(super) struct Request<'a> {
    pub req: &'a http::Request<ClientBody>,
    /// `Some` when normalising changed the path; see `admit`.
    pub normalized: Option<&'a PathAndQuery>,
    pub host: &'a str,
    pub conn: ConnInfo,
}

/// The request's route, also kept in `outcome` for the access log and `answer::finish`; the
/// request's caller then as the route sees it (see [`caller`]).
#[inline(always)]
pub(super) fn route(
    routes: &RouteReader,
    request: &mut Request<'_>,
    outcome: &mut Outcome,
) -> Result<Arc<Route>, ProxyError> {
    let Request {
        req,
        normalized,
        host,
        conn,
    } = *request;
    let route = {
        let path = normalized.map_or(req.uri().path(), PathAndQuery::path);
        let table = routes.load();
        let host = normalize_host(host);
        if table.has_ranked() || conn.port.is_some() {
            let facts = RequestFacts {
                method: req.method(),
                headers: req.headers(),
                query: req.uri().query(),
            };
            match conn.port {
                None => table.lookup_with(&host, path, conn.tls, &facts).cloned(),
                Some(port) => table.lookup_port(port, conn.tls, &host, path, &facts).cloned(),
            }
        } else {
            table.lookup_on(&host, path, conn.tls).cloned()
        }
    };
    let route = route.ok_or_else(|| ProxyError::NoRoute { host: host.to_string() })?;
    outcome.route = Some(route.clone());
    caller(&route, request, outcome);
    Ok(route)
}

/// The caller as the route's profile sees it: for a route with a realip rule (ingress-nginx's
/// `enable-real-ip`, `use-forwarded-headers`), the address the rule finds in the request when
/// the peer is trusted; every phase after this one (limits, source ranges, hash keys, the
/// forwarding fields, the access log) reads it as the caller. Other routes: one `None` check.
#[inline(always)]
fn caller(route: &Route, request: &mut Request<'_>, outcome: &mut Outcome) {
    let Some(rule) = route
        .rules
        .nginx_forwarding
        .as_ref()
        .and_then(|keys| keys.real_ip.as_ref())
    else {
        return;
    };
    let peer = request.conn.peer.ip();
    if let Some(client) = rule.client(request.req.headers(), peer) {
        request.conn.peer = SocketAddr::new(client, 0);
        request.conn.via = Some(peer);
        outcome.client = Some(client);
    }
}
