//! When `send` writes: at once, or after the worker's other ready tasks.

use std::{
    io::{self, Read},
    net::TcpListener,
    sync::{Arc, Mutex},
};

use tokio::net::TcpStream;

use super::*;
use crate::headers::AddedFields;

/// Spawns a `send` on a fresh connection and, queued right behind it, a task that looks whether
/// the pod already has the request. Returns what that task saw, then the request as received.
async fn request_seen_by_the_next_task(write_at: WriteAt) -> (bool, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind on loopback");
    let client = TcpStream::connect(listener.local_addr().expect("local address"))
        .await
        .expect("connect");
    let (pod, _) = listener.accept().expect("accept");
    pod.set_nonblocking(true).expect("non-blocking pod socket");
    let pod = Arc::new(Mutex::new(pod));

    let conn = Box::new(Http1::new(Stream::Tcp(client), Box::new(())));
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::HOST, http::HeaderValue::from_static("pod"));
    // Both spawned from this task: the current-thread runtime polls them in this order.
    let exchange = tokio::spawn(async move {
        let added = AddedFields::default();
        let head = Outgoing {
            method: &Method::GET,
            uri: http::Uri::from_static("/paced"),
            headers: &headers,
            added: &added,
            client_tls: false,
        };
        send(conn, &head, RequestBody::Empty, write_at, None).await
    });
    let probe = tokio::spawn({
        let pod = pod.clone();
        async move {
            let mut byte = [0u8; 1];
            match pod.lock().expect("pod socket").peek(&mut byte) {
                Ok(n) => n > 0,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => false,
                Err(error) => panic!("peek: {error}"),
            }
        }
    });
    let seen_by_next_task = probe.await.expect("probe task");

    let mut received = Vec::new();
    let mut chunk = [0u8; 256];
    while !received.ends_with(b"\r\n\r\n") {
        let read = pod.lock().expect("pod socket").read(&mut chunk);
        match read {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => tokio::task::yield_now().await,
            Err(error) => panic!("read: {error}"),
        }
    }
    exchange.abort();
    (seen_by_next_task, String::from_utf8(received).expect("ASCII head"))
}

#[tokio::test(flavor = "current_thread")]
async fn a_request_written_at_once_is_on_the_wire_before_the_next_task_runs() {
    let (seen, head) = request_seen_by_the_next_task(WriteAt::Once).await;
    assert!(seen, "the next task found the request already sent");
    assert!(head.starts_with("GET /paced HTTP/1.1\r\n"), "{head}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_request_written_after_ready_connections_lets_the_next_task_run_first() {
    let (seen, head) = request_seen_by_the_next_task(WriteAt::AfterReadyConnections).await;
    assert!(!seen, "the next task ran before the write");
    assert!(
        head.starts_with("GET /paced HTTP/1.1\r\n"),
        "then the request went out: {head}"
    );
}
