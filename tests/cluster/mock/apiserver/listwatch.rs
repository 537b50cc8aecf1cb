//! LIST and WATCH as kube-runtime's watcher uses them: a list at the current version, then a
//! watch from that version streaming newline-delimited JSON events (chunked) until the client
//! leaves, `timeoutSeconds` pass or the test cuts it; faults (Gone, lag, held lists) apply here.

use std::{convert::Infallible, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{
    Body, Gone, Shared, json_response,
    request::{Params, Target},
    status,
};

pub(super) async fn list(shared: &Arc<Shared>, target: &Target, params: &Params) -> Response<Body> {
    let plural = target.resource.plural;
    let mut held = shared.held.subscribe();
    if held.borrow().contains(plural) {
        eprintln!("apiserver: holding a LIST of {plural}");
        let _ = held.wait_for(|held| !held.contains(plural)).await;
    }
    let selector = match params.field_selector() {
        Ok(selector) => selector,
        Err(message) => return status(StatusCode::BAD_REQUEST, "BadRequest", &message),
    };
    // `limit` and `continue` as kube-apiserver serves a list without resourceVersion (kube-runtime's
    // default, 500 per page): the token carries the first page's version and the last key sent.
    let limit = params
        .get("limit")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&l| l > 0);
    let token = params.get("continue").filter(|t| !t.is_empty());
    let resume = match token.map(parse_continue) {
        Some(Some(resume)) => Some(resume),
        Some(None) => return status(StatusCode::BAD_REQUEST, "BadRequest", "malformed continue token"),
        None => None,
    };
    let after = resume
        .as_ref()
        .map(|(_, namespace, name)| (namespace.as_str(), name.as_str()));
    let (now, items, more) = shared.store.list_page(
        plural,
        target.namespace.as_deref(),
        after,
        limit.unwrap_or(usize::MAX),
        |object| selector.matches(object),
    );
    let version = resume.as_ref().map_or(now, |(version, _, _)| *version);
    let next = more
        .then(|| items.last())
        .flatten()
        .map(|last| {
            let meta = &last["metadata"];
            let field = |f: &str| meta[f].as_str().unwrap_or_default().to_string();
            format!("{version}/{}/{}", field("namespace"), field("name"))
        })
        .unwrap_or_default();
    // Like kube-apiserver, list items carry neither kind nor apiVersion.
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut item| {
            if let Some(fields) = item.as_object_mut() {
                fields.remove("kind");
                fields.remove("apiVersion");
            }
            item
        })
        .collect();
    let list = json!({
        "kind": format!("{}List", target.resource.kind),
        "apiVersion": target.resource.api_version(),
        "metadata": {"resourceVersion": version.to_string(), "continue": next},
        "items": items,
    });
    json_response(StatusCode::OK, &list)
}

/// `VERSION/NAMESPACE/NAME` of a continue token (names and namespaces hold no `/`).
fn parse_continue(token: &str) -> Option<(u64, String, String)> {
    let mut parts = token.splitn(3, '/');
    let version = parts.next()?.parse().ok()?;
    Some((version, parts.next()?.to_string(), parts.next()?.to_string()))
}

/// Streams the changes after `resourceVersion` as newline-delimited JSON watch events, until the
/// client goes away, `timeoutSeconds` pass, or the test cuts watches.
pub(super) fn watch(shared: &Arc<Shared>, target: &Target, params: &Params) -> Response<Body> {
    let gone = {
        let mut faults = shared.faults.lock().expect("faults lock");
        (!faults.gone.is_empty()).then(|| faults.gone.remove(0))
    };
    let too_old = json!({
        "type": "ERROR",
        "object": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "too old resource version", "reason": "Expired", "code": 410},
    });
    match gone {
        Some(Gone::Http) => return status(StatusCode::GONE, "Expired", "too old resource version"),
        Some(Gone::Event) => return stream_response(futures::stream::iter([line(&too_old)])),
        None => {}
    }
    let selector = match params.field_selector() {
        Ok(selector) => selector,
        Err(message) => return status(StatusCode::BAD_REQUEST, "BadRequest", &message),
    };
    let mut after: u64 = params.get("resourceVersion").and_then(|v| v.parse().ok()).unwrap_or(0);
    let timeout = Duration::from_secs(params.get("timeoutSeconds").and_then(|v| v.parse().ok()).unwrap_or(300));
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let (shared, plural, namespace) = (shared.clone(), target.resource.plural, target.namespace.clone());
    let mut cut = shared.cut.subscribe();
    cut.borrow_and_update();
    tokio::spawn(async move {
        let mut latest = shared.store.subscribe();
        if after == 0 {
            // "Any version": the current objects as ADDED, then what follows.
            let (version, items) = shared
                .store
                .list(plural, namespace.as_deref(), |object| selector.matches(object));
            for object in items {
                if tx
                    .send(line(&json!({"type": "ADDED", "object": object})))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            after = version;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            // Mark seen before reading, so a change made meanwhile wakes the wait below.
            latest.borrow_and_update();
            for change in shared.store.changes_after(after, plural, namespace.as_deref()) {
                after = change.version;
                // Once cut, not one more event: a change made after the cut must come by a new watch.
                if cut.has_changed().unwrap_or(true) {
                    return;
                }
                if selector.matches(&change.object) {
                    let event = json!({"type": change.kind, "object": change.object});
                    if tx.send(line(&event)).await.is_err() {
                        return;
                    }
                }
            }
            tokio::select! {
                biased;
                _ = cut.changed() => return,
                changed = latest.changed() => if changed.is_err() { return },
                () = &mut deadline => return,
                () = tx.closed() => return,
            }
            let lag = shared.faults.lock().expect("faults lock").lag.get(plural).copied();
            if let Some(lag) = lag {
                tokio::time::sleep(lag).await;
            }
        }
    });
    let chunks = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) });
    stream_response(chunks)
}

fn line(event: &Value) -> Bytes {
    let mut bytes = serde_json::to_vec(event).expect("serializable");
    bytes.push(b'\n');
    Bytes::from(bytes)
}

fn stream_response(chunks: impl futures::Stream<Item = Bytes> + Send + Sync + 'static) -> Response<Body> {
    use futures::StreamExt;
    let body = StreamBody::new(chunks.map(|chunk| Ok::<_, Infallible>(Frame::data(chunk))));
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(BodyExt::boxed(body))
        .expect("a valid response")
}
