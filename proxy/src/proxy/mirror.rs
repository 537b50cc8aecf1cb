//! Mirror: after `prepare`, a copy of the prepared request for each of the route's mirrors that
//! draws it (see `crate::mirror` for what is copied and the bounds), sent in a task of its own
//! so the client's answer never waits for it; the copy's answer is read to its end and dropped.

use http::{HeaderMap, Method, uri::PathAndQuery};
use tracing::debug;

use super::{Inner, prepare::Prepared};
use crate::{
    body::RequestBody,
    headers::AddedFields,
    mirror::{Fate, MIRROR_TIMEOUT, Mirror, Slot, count},
    upstream::{EndpointGuard, Outgoing, UpstreamClients, h1::WriteAt},
};

/// Sends the copies of `prepared` (a request for `host`) that `mirror` draws.
pub(super) fn mirror(inner: &Inner, mirror: &Mirror, host: &str, prepared: &Prepared) {
    if !matches!(prepared.body, RequestBody::Empty) {
        count(Fate::Skipped);
        return;
    }
    for target in mirror.drawn() {
        let Some(slot) = Slot::take() else {
            count(Fate::Dropped);
            continue;
        };
        let upstream = target.upstream.clone();
        let Some(index) = upstream.pick(&[], None) else {
            // No endpoint: nothing to copy to, as a forwarded request would get 503.
            continue;
        };
        let endpoint = upstream.endpoints[index].clone();
        count(Fate::Sent);
        let copy = Copy {
            method: prepared.method.clone(),
            headers: prepared.headers.clone(),
            added: prepared.added.clone(),
            path_and_query: prepared.path_and_query.clone(),
            host: host.to_string(),
        };
        let client_tls = prepared.client_tls;
        let clients = inner.clients.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let _guard = EndpointGuard::new(endpoint.clone());
            let uri = UpstreamClients::request_uri(upstream.protocol, endpoint.addr, &copy.host, &copy.path_and_query);
            let head = Outgoing {
                method: &copy.method,
                uri,
                headers: &copy.headers,
                added: &copy.added,
                client_tls,
            };
            let sent = clients.send(&upstream, &endpoint, &head, RequestBody::Empty, WriteAt::Once, None);
            let answered = async {
                let response = sent.await.map_err(|error| error.to_string())?;
                // Read to its end, so an HTTP/1 connection goes back to the pool.
                http_body_util::BodyExt::collect(response.into_body())
                    .await
                    .map_err(|error| error.to_string())?;
                Ok::<_, String>(())
            };
            match tokio::time::timeout(MIRROR_TIMEOUT, answered).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => debug!(%error, backend = %upstream.id, "Mirror failed"),
                Err(_) => debug!(backend = %upstream.id, "Mirror timed out"),
            }
        });
    }
}

/// What a copy takes into its task.
struct Copy {
    method: Method,
    headers: HeaderMap,
    added: AddedFields,
    path_and_query: PathAndQuery,
    host: String,
}
