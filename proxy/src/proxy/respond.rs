//! Respond: the pod's response as the client will see it. Hop-by-hop fields out, the route's
//! response header edits applied, the body
//! streamed back (its trailers filtered) while the endpoint's in-flight count is held; an
//! accepted upgrade hands both connections over to a tunnel.

use http::{HeaderValue, Response, StatusCode, header};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tracing::debug;

use crate::{
    headers::{TrailerFilter, drop_length_beside_transfer_encoding, strip_hop_by_hop},
    response_body::ResponseBody,
    routes::HeaderEdits,
    server::tunnel::Tunnels,
    upstream::{EndpointGuard, UpstreamBody, h1::Upgraded},
};

/// Turns the upstream's answer into ours: tunnels an accepted upgrade, otherwise strips
/// hop-by-hop headers and streams the body, holding the endpoint's in-flight count until done.
/// `Trailer` stays for a client that sent `TE: trailers`: hyper only writes HTTP/1.1 trailer
/// fields the response declared. `read_timeout`, a route's own, bounds each wait for the body;
/// `edits`, the route's then its split share's, change the pod's fields (never ours).
pub(super) fn respond(
    mut response: Response<UpstreamBody>,
    guard: EndpointGuard,
    (client_upgrade, accepts_trailers): (Option<OnUpgrade>, bool),
    (read_timeout, edits): (Option<std::time::Duration>, [Option<&HeaderEdits>; 2]),
    tunnels: &Tunnels,
) -> Response<ResponseBody> {
    // They name no hop-by-hop or framing field (refused at build), so the order with the
    // stripping below does not matter.
    for edits in edits.into_iter().flatten() {
        edits.apply(response.headers_mut());
    }
    if response.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(client_upgrade) = client_upgrade
    {
        let (parts, body) = response.into_parts();
        // The connection leaves the pool for good: it becomes the tunnel's.
        let upstream = match body {
            UpstreamBody::H1(body) => body.upgrade(),
            UpstreamBody::H2(_) | UpstreamBody::ReadIdle(_) => None,
        };
        tokio::spawn(tunnel(client_upgrade, upstream, guard, tunnels.clone()));
        return Response::from_parts(parts, ResponseBody::empty());
    }
    let declared: Vec<HeaderValue> = if accepts_trailers {
        response.headers().get_all(header::TRAILER).iter().cloned().collect()
    } else {
        Vec::new()
    };
    // Only a body of unknown length can end in trailers; filtered by the head the pod sent.
    let trailers = if http_body::Body::size_hint(response.body()).exact().is_none() {
        TrailerFilter::new(response.headers())
    } else {
        TrailerFilter::default()
    };
    drop_length_beside_transfer_encoding(response.headers_mut());
    strip_hop_by_hop(response.headers_mut());
    for value in declared {
        response.headers_mut().append(header::TRAILER, value);
    }
    response.map(|body| ResponseBody::Upstream {
        body: match read_timeout {
            Some(timeout) => body.read_timeout(timeout),
            None => body,
        },
        trailers,
        _guard: Some(guard),
        _in_progress: None,
        pace: None,
    })
}

/// Puts the affinity cookies a request's picks set (`cookies`, in the order set) before the
/// pod's own `Set-Cookie` fields, where nginx's balancer writes them: into the answer's fields
/// before the pod's are copied after them.
pub(super) fn with_cookies(mut response: Response<ResponseBody>, cookies: Vec<HeaderValue>) -> Response<ResponseBody> {
    if cookies.is_empty() {
        return response;
    }
    let headers = response.headers_mut();
    let pods: Vec<HeaderValue> = match headers.entry(header::SET_COOKIE) {
        http::header::Entry::Occupied(entry) => entry.remove_entry_mult().1.collect(),
        http::header::Entry::Vacant(_) => Vec::new(),
    };
    for value in cookies.into_iter().chain(pods) {
        headers.append(header::SET_COOKIE, value);
    }
    response
}

/// Waits for the client's side of the upgrade, then runs the tunnel until either side closes.
async fn tunnel(client: OnUpgrade, upstream: Option<Upgraded>, guard: EndpointGuard, tunnels: Tunnels) {
    let endpoint = guard.endpoint().addr;
    let Some(upstream) = upstream else {
        debug!(%endpoint, "Upgrade did not complete: the pod's connection cannot be upgraded");
        return;
    };
    let client = match client.await {
        Ok(client) => client,
        Err(error) => {
            debug!(%error, %endpoint, "Upgrade did not complete");
            return;
        }
    };
    tunnels.run(TokioIo::new(client), upstream, endpoint).await;
    drop(guard);
}
