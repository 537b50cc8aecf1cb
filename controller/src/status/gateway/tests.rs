//! The Gateway API status writer's writes: every patch not in flight written once, at most
//! `WRITES_AT_ONCE` at a time.

use std::{collections::BTreeSet, time::Duration};

use serde_json::json;

use super::*;

fn route_patch(n: usize) -> Patch {
    Patch {
        kind: Kind::HTTPRoute,
        namespace: Some("web".to_string()),
        name: format!("route-{n}"),
        resource_version: "7".to_string(),
        status: json!({"parents": []}),
    }
}

/// The next request's name (the path's segment before `/status`) and its responder.
async fn next_write(api: &mut ApiServerVerifier, within: Duration) -> Option<(String, Responder)> {
    let (request, send) = tokio::time::timeout(within, api.0.next_request()).await.ok()??;
    assert_eq!(request.method(), http::Method::PATCH);
    let path = request.uri().path().to_string();
    let name = path.strip_suffix("/status").and_then(|rest| rest.rsplit('/').next());
    Some((name.expect("a status write").to_string(), send))
}

#[tokio::test]
async fn status_writes_go_out_a_bounded_number_at_a_time() {
    let (client, mut api) = mk_client();
    let patches: Vec<Patch> = (0..WRITES_AT_ONCE + 4).map(route_patch).collect();
    let expected: BTreeSet<String> = patches.iter().map(|patch| patch.name.clone()).collect();
    let mut writer = GatewayStatusWriter::new(client, None);
    let writing = tokio::spawn(async move { (writer.write_all(patches).await, writer) });

    let second = Duration::from_secs(1);
    let mut waiting = Vec::new();
    for _ in 0..WRITES_AT_ONCE {
        waiting.push(
            next_write(&mut api, second)
                .await
                .expect("a write in flight before any answer"),
        );
    }
    let beyond = next_write(&mut api, Duration::from_millis(200)).await;
    assert!(beyond.is_none(), "more than {WRITES_AT_ONCE} writes in flight");

    let mut written = BTreeSet::new();
    while let Some((name, send)) = waiting.pop() {
        reply(
            send,
            http::StatusCode::OK,
            json!({"metadata": {"name": name, "namespace": "web"}}),
        );
        written.insert(name);
        // An answer frees a place: the next write goes out, until none is left.
        if written.len() + waiting.len() < expected.len() {
            waiting.push(next_write(&mut api, second).await.expect("the next write"));
        }
    }
    let (report, writer) = tokio::time::timeout(second, writing)
        .await
        .expect("done")
        .expect("no panic");
    assert_eq!(written, expected);
    assert_eq!((report.written, report.failed), (expected.len(), 0));
    assert_eq!(writer.in_flight.len(), expected.len());
}

#[tokio::test]
async fn a_patch_already_in_flight_is_not_written_again() {
    let (client, mut api) = mk_client();
    let mut writer = GatewayStatusWriter::new(client, None);
    let patch = route_patch(1);
    let key = (patch.kind, patch.namespace.clone(), patch.name.clone());
    writer.in_flight.insert(key.clone(), patch.resource_version.clone());
    let report = writer.write_all(vec![patch]).await;
    assert_eq!((report.written, report.failed), (0, 0));
    assert!(
        next_write(&mut api, Duration::from_millis(200)).await.is_none(),
        "written again"
    );
    assert!(writer.in_flight.contains_key(&key));
}

// === mocked API server ===

crate::mock_api_server!();
