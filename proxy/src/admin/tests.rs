//! The admin listener's documents, served without holding up the runtime it shares.

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
    assert!(routes.contains("\"hosts\""), "{routes}");
    assert_eq!(get(&admin, "/nothing").await.0, StatusCode::NOT_FOUND);
}
