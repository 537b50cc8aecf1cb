//! The admin listener's documents: served without holding up the runtime it shares, a chunk at a
//! time, at most `WRITERS` at once.

use std::{
    sync::{Mutex, mpsc},
    time::Duration,
};

use http_body_util::BodyExt;
use serde::{Serialize, Serializer};

use super::*;
use crate::{
    metrics::ProxyMetrics,
    publish::RoutePublisher,
    spec::{Document, TableSpec},
};

/// Serialises `true` once it is told to, `false` when not told within the bound: a value whose
/// writing waits for the runtime that asked for it.
struct WaitsForTheRuntime(Mutex<mpsc::Receiver<()>>);

impl Serialize for WaitsForTheRuntime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let told = self.0.lock().expect("unpoisoned").recv_timeout(Duration::from_secs(10));
        serializer.serialize_bool(told.is_ok())
    }
}

async fn get(admin: &Admin, path: &str) -> (StatusCode, String) {
    let request = Request::get(path).body(ClientBody::empty()).expect("a request");
    let response = admin.serve(request).await;
    let status = response.status();
    let body = response.into_body().collect().await.expect("a body").to_bytes();
    (status, String::from_utf8(body.to_vec()).expect("UTF-8"))
}

#[tokio::test(flavor = "current_thread")]
async fn a_document_is_written_while_the_admin_runtime_runs_other_tasks() {
    let (tell, told) = mpsc::channel();
    let mut spec = TableSpec::default();
    let report = Document::deferred_json(WaitsForTheRuntime(Mutex::new(told)));
    spec.documents.insert("report".into(), report.clone());
    let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    publisher.publish(spec);
    let admin = Admin::new(reader, Arc::new(Registry::default()));
    // Runs only when this one-thread runtime gets to another task: while the document is being
    // written elsewhere, not when its writing holds the thread.
    tokio::spawn(async move { tell.send(()).expect("the writer listens") });

    assert_eq!(get(&admin, "/report").await, (StatusCode::OK, "true".to_string()));
    assert!(report.is_written());
    let (status, routes) = get(&admin, "/routes").await;
    assert_eq!(status, StatusCode::OK);
    let whole = serde_json::to_string_pretty(&TableSpec::default()).expect("a spec serializes");
    assert_eq!(routes, whole);
    assert_eq!(get(&admin, "/nothing").await.0, StatusCode::NOT_FOUND);
}

fn admin_with(documents: impl IntoIterator<Item = (&'static str, Document)>) -> Admin {
    let mut spec = TableSpec::default();
    spec.documents.extend(
        documents
            .into_iter()
            .map(|(name, document)| (name.to_string(), document)),
    );
    let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    publisher.publish(spec);
    Admin::new(reader, Arc::new(Registry::default()))
}

fn served(admin: &Admin, path: &str) -> Response<ResponseBody> {
    let request = Request::get(path).body(ClientBody::empty()).expect("a request");
    futures::FutureExt::now_or_never(admin.serve(request)).expect("answered without waiting")
}

/// Waits, boundedly, until every writer's place is free again.
async fn writers_freed(admin: &Admin) -> bool {
    for _ in 0..1000 {
        if admin.writers.available_permits() == WRITERS {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn a_large_document_is_sent_in_bounded_chunks_that_make_its_whole_text() {
    let text = format!("\"{}\"", "0123456789".repeat(40_000));
    let admin = admin_with([("big", Document::new(&text))]);
    let mut body = served(&admin, "/big").into_body();
    let mut sent = Vec::new();
    let mut chunks = 0;
    while let Some(frame) = body.frame().await {
        let chunk = frame.expect("a whole body").into_data().expect("data");
        assert!(
            chunk.len() <= response_body::streamed::CHUNK,
            "a chunk of {} bytes",
            chunk.len()
        );
        sent.extend_from_slice(&chunk);
        chunks += 1;
    }
    assert_eq!(String::from_utf8(sent).expect("UTF-8"), text);
    assert!(chunks > 4, "{chunks} chunks");
    assert!(writers_freed(&admin).await);
}

#[tokio::test]
async fn documents_past_the_writers_bound_are_refused_until_one_is_written() {
    let (tell, told) = mpsc::channel();
    let waits = Document::deferred_json(WaitsForTheRuntime(Mutex::new(told)));
    let admin = admin_with([("waits", waits), ("small", Document::new("{}"))]);
    let busy = || DOCUMENTS.get_or_create(&[("outcome", "busy")]).get();
    // The first writer waits in the document's writing and holds its place; the others wait on it.
    let held: Vec<_> = (0..WRITERS).map(|_| served(&admin, "/waits")).collect();
    let refused_before = busy();
    let refused = served(&admin, "/small");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
    assert!(busy() > refused_before);
    tell.send(()).expect("the writer listens");
    for response in held {
        let body = response.into_body().collect().await.expect("a whole body").to_bytes();
        assert_eq!(&body[..], b"true");
    }
    assert!(writers_freed(&admin).await);
    let (status, text) = get(&admin, "/small").await;
    assert_eq!((status, text.as_str()), (StatusCode::OK, "{}"));
}

#[tokio::test]
async fn a_client_that_leaves_part_way_frees_its_writer() {
    let text = "x".repeat(20 * response_body::streamed::CHUNK);
    let admin = admin_with([("big", Document::new(&text))]);
    let abandoned = || DOCUMENTS.get_or_create(&[("outcome", "abandoned")]).get();
    let before = abandoned();
    let mut body = served(&admin, "/big").into_body();
    body.frame().await.expect("a first chunk").expect("data");
    drop(body);
    assert!(writers_freed(&admin).await, "the writer still holds its place");
    assert!(abandoned() > before);
}

#[tokio::test]
async fn a_writer_whose_client_stops_reading_stops_after_its_timeout() {
    let (mut out, body) = response_body::streamed::channel(Duration::from_millis(50), Duration::from_secs(60));
    let written = tokio::task::spawn_blocking(move || {
        let chunk = vec![b'x'; response_body::streamed::CHUNK];
        (0..=response_body::streamed::QUEUED + 1).try_for_each(|_| io::Write::write_all(&mut out, &chunk))
    });
    let error = written.await.expect("the writer ran").expect_err("nobody reads");
    assert_eq!(error.kind(), io::ErrorKind::TimedOut);
    drop(body);
}

#[tokio::test]
async fn a_head_request_writes_nothing() {
    let admin = admin_with([("big", Document::new("{}"))]);
    let request = Request::head("/routes").body(ClientBody::empty()).expect("a request");
    let response = admin.serve(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    assert!(
        response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes()
            .is_empty()
    );
    assert_eq!(admin.writers.available_permits(), WRITERS);
}

#[tokio::test]
async fn a_client_that_reads_too_slowly_for_the_whole_loses_the_rest() {
    let (mut out, body) = response_body::streamed::channel(Duration::from_secs(60), Duration::from_millis(300));
    let mut body = ResponseBody::Streamed(Box::new(body));
    let written = tokio::task::spawn_blocking(move || {
        let chunk = vec![b'x'; response_body::streamed::CHUNK];
        (0..100)
            .try_for_each(|_| io::Write::write_all(&mut out, &chunk))
            .and_then(|()| out.finish())
    });
    // Each chunk is taken well within the 60 s a chunk may wait, yet the whole is not.
    let mut taken = 0;
    while let Some(Ok(_)) = body.frame().await {
        taken += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let error = written.await.expect("the writer ran").expect_err("the deadline passed");
    assert_eq!(error.kind(), io::ErrorKind::TimedOut);
    assert!(taken < 100, "{taken} chunks");
}
