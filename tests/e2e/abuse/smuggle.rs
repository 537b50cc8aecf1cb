//! Requests a pod could read another way than shunt did (issue 25), against the real binary on
//! both HTTP/1.1 paths: a plain GET is served by our own loop, a chunked one by hyper's. The pod
//! is a raw socket that records the bytes it got and answers with canned bytes, so nothing on
//! its side tidies what shunt sent.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use http::{Request, Version};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

use crate::support::*;

const HOST: &str = "pod.example.com";

/// A pod that records each request's raw bytes and answers every one with `answer`.
struct RecordingPod {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    /// Connections on which shunt closed its side.
    closed: Arc<Mutex<usize>>,
    accept: JoinHandle<()>,
}

impl Drop for RecordingPod {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl RecordingPod {
    async fn start(answer: &'static str) -> RecordingPod {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding a pod");
        let addr = listener.local_addr().expect("a bound listener has an address");
        let (requests, closed) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(0)));
        let accept = tokio::spawn({
            let (requests, closed) = (requests.clone(), closed.clone());
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(serve_pod_connection(stream, answer, requests.clone(), closed.clone()));
                }
            }
        });
        RecordingPod {
            addr,
            requests,
            closed,
            accept,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .expect("no test thread panicked holding it")
            .clone()
    }

    /// The one request the pod got, lowercased.
    fn only_request(&self) -> String {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "{requests:#?}");
        requests[0].to_ascii_lowercase()
    }

    fn closed(&self) -> usize {
        *self.closed.lock().expect("no test thread panicked holding it")
    }
}

async fn serve_pod_connection(
    mut stream: TcpStream,
    answer: &'static str,
    requests: Arc<Mutex<Vec<String>>>,
    closed: Arc<Mutex<usize>>,
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(len) = request_len(&buf) {
            let request: Vec<u8> = buf.drain(..len).collect();
            requests
                .lock()
                .unwrap()
                .push(String::from_utf8_lossy(&request).into_owned());
            if stream.write_all(answer.as_bytes()).await.is_err() {
                return;
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    *closed.lock().unwrap() += 1;
}

/// The length of the first whole request in `buf`: head, then a chunked body up to its
/// trailer section's end, or `Content-Length` bytes.
fn request_len(buf: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(buf).to_ascii_lowercase();
    let head_end = text.find("\r\n\r\n")? + 4;
    let head = &text[..head_end];
    if head.contains("\ntransfer-encoding: chunked") {
        let body = &text[head_end..];
        let last = body
            .find("\r\n0\r\n")
            .map(|at| at + 2)
            .or_else(|| body.starts_with("0\r\n").then_some(0))?;
        return Some(head_end + last + body[last..].find("\r\n\r\n")? + 4);
    }
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    (buf.len() >= head_end + length).then_some(head_end + length)
}

async fn serve_pod(pod: &RecordingPod, args: &[&str]) -> (Manifests, Shunt) {
    serve_host(HOST, "pod", None, &[pod.addr.port()], args).await
}

/// Writes `request` and reads until shunt closes (or 5 s pass): every response it sent.
async fn exchange(shunt: &Shunt, request: &str) -> (String, bool) {
    let mut stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("writing a raw request");
    let mut answer = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer))
        .await
        .is_ok();
    (String::from_utf8_lossy(&answer).to_ascii_lowercase(), closed)
}

/// The request head with `fields`, plain (our loop) or with an empty chunked body (hyper's).
fn mk_get(fields: &str, chunked: bool) -> String {
    let body = if chunked {
        "transfer-encoding: chunked\r\n\r\n0\r\n\r\n"
    } else {
        "\r\n"
    };
    format!("GET /x HTTP/1.1\r\nhost: {HOST}\r\n{fields}connection: close\r\n{body}")
}

const OK: &str = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
const SWITCH_TO_H2C: &str = "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: h2c\r\n\r\n";

#[tokio::test]
async fn an_h2c_upgrade_reaches_the_pod_as_a_plain_request() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let h2c = "connection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAARAAAAAAAIAAAAA\r\n";
    let (answer, _) = exchange(&shunt, &mk_get(h2c, false)).await;
    assert!(answer.starts_with("http/1.1 200"), "{answer}");
    let seen = pod.only_request();
    assert!(!seen.contains("upgrade"), "{seen}");
    assert!(!seen.contains("http2-settings"), "{seen}");
}

#[tokio::test]
async fn a_pod_that_switches_to_h2c_unasked_gets_a_502_and_the_connection_closes_never_a_tunnel() {
    let pod = RecordingPod::start(SWITCH_TO_H2C).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let h2c = "connection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAARAAAAAAAIAAAAA\r\n";
    // Keep-alive asked for, and the client's HTTP/2 preface right behind the request.
    let request = format!("GET /x HTTP/1.1\r\nhost: {HOST}\r\n{h2c}\r\nPRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    let (answer, closed) = exchange(&shunt, &request).await;
    assert!(answer.starts_with("http/1.1 502"), "{answer}");
    assert!(!answer.contains(" 101 "), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(closed, "shunt kept the connection open: {answer}");
    let seen = pod.requests().concat();
    assert!(!seen.contains("PRI *"), "the preface reached the pod: {seen}");
}

#[tokio::test]
async fn an_http_1_0_upgrade_is_not_forwarded_and_its_client_gets_no_101() {
    let pod = RecordingPod::start(SWITCH_TO_H2C).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let request = format!("GET /x HTTP/1.0\r\nhost: {HOST}\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n");
    let (answer, _) = exchange(&shunt, &request).await;
    assert!(
        answer.starts_with("http/1.0 502") || answer.starts_with("http/1.1 502"),
        "{answer}"
    );
    assert!(!answer.contains(" 101 "), "{answer}");
    assert!(!pod.only_request().contains("upgrade"), "{}", pod.only_request());
}

#[tokio::test]
async fn an_upgrade_the_operator_allows_is_forwarded_and_others_in_the_list_are_not() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &["--allow-upgrade", "foo"]).await;
    let (answer, _) = exchange(&shunt, &mk_get("connection: upgrade\r\nupgrade: h2c, foo/1\r\n", false)).await;
    assert!(answer.starts_with("http/1.1 200"), "{answer}");
    let seen = pod.only_request();
    assert!(seen.contains("\r\nupgrade: foo/1\r\n"), "{seen}");
    assert!(!seen.contains("h2c"), "{seen}");
}

const UNDERSCORED: &str = "transfer_encoding: chunked\r\ncontent_length: 50\r\nx_user: admin\r\nx-kept: yes\r\n";

#[tokio::test]
async fn fields_named_with_underscores_never_reach_the_pod_on_either_path_and_are_counted() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    for chunked in [false, true] {
        let (answer, _) = exchange(&shunt, &mk_get(UNDERSCORED, chunked)).await;
        assert!(answer.starts_with("http/1.1 200"), "chunked {chunked}: {answer}");
    }
    let h2 = Request::get(format!("http://{HOST}/x"))
        .version(Version::HTTP_2)
        .header("x_user", "admin")
        .body(full(Bytes::new()))
        .expect("a valid request");
    assert_eq!(shunt.send_h2(h2).await.status, 200);
    let requests = pod.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    for seen in requests.iter().map(|r| r.to_ascii_lowercase()) {
        assert!(!seen.contains('_'), "{seen}");
    }
    assert!(requests[0].contains("x-kept: yes"), "{}", requests[0]);
    let dropped = sample(&shunt.metrics().await, "shunt_request_fields_dropped_total", &[]);
    assert_eq!(dropped, Some(7.0));
}

#[tokio::test]
async fn allow_underscores_in_headers_forwards_them_as_written() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &["--allow-underscores-in-headers"]).await;
    let (answer, _) = exchange(&shunt, &mk_get("x_user: admin\r\n", false)).await;
    assert!(answer.starts_with("http/1.1 200"), "{answer}");
    assert!(
        pod.only_request().contains("\r\nx_user: admin\r\n"),
        "{}",
        pod.only_request()
    );
}

#[tokio::test]
async fn a_field_name_that_is_not_a_token_is_a_400_on_both_paths() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    for name in ["x(a)", "x a", "x\"a", "x/a", "x@a", "x{a}"] {
        for chunked in [false, true] {
            let (answer, _) = exchange(&shunt, &mk_get(&format!("{name}: 1\r\n"), chunked)).await;
            assert!(answer.starts_with("http/1.1 400"), "{name} chunked {chunked}: {answer}");
        }
    }
    assert!(pod.requests().is_empty());
}

#[tokio::test]
async fn request_trailers_carry_no_framing_routing_or_head_fields_to_the_pod() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let trailers = "content-length: 5\r\ntransfer-encoding: chunked\r\nhost: admin.test\r\nauthorization: x\r\nx-user: b\r\nx-digest: abc\r\n";
    let request = format!(
        "POST /x HTTP/1.1\r\nhost: {HOST}\r\nx-user: a\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n5\r\nhello\r\n0\r\n{trailers}\r\n"
    );
    let (answer, _) = exchange(&shunt, &request).await;
    assert!(answer.starts_with("http/1.1 200"), "{answer}");
    let seen = pod.only_request();
    let (_, section) = seen.split_once("\r\n0\r\n").expect("a chunked body");
    assert_eq!(section, "x-digest: abc\r\n\r\n", "{seen}");
}

#[tokio::test]
async fn response_trailers_carry_no_framing_credential_or_head_fields_to_the_client() {
    const TRAILED: &str = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nx-user: a\r\n\
        trailer: x-digest, content-length, cookie, x-user, x-forwarded-for\r\n\r\n2\r\nok\r\n0\r\n\
        content-length: 99\r\ncookie: s=1\r\nx-user: b\r\nx-forwarded-for: 10.0.0.1\r\nx-digest: abc\r\n\r\n";
    let pod = RecordingPod::start(TRAILED).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let mut h1 = get(HOST, "/x");
    h1.headers_mut().insert("te", "trailers".parse().unwrap());
    let h2 = Request::get(format!("http://{HOST}/x"))
        .version(Version::HTTP_2)
        .header("te", "trailers")
        .body(full(Bytes::new()))
        .expect("a valid request");
    for (version, reply) in [("HTTP/1.1", shunt.send(h1).await), ("HTTP/2", shunt.send_h2(h2).await)] {
        assert_eq!(reply.status, 200, "{version}");
        let trailers = reply.trailers.expect("the allowed trailer");
        let names: Vec<_> = trailers.keys().map(|name| name.as_str()).collect();
        assert_eq!(names, ["x-digest"], "{version}");
    }
}

#[tokio::test]
async fn a_response_content_length_list_of_equal_values_reaches_the_client_as_one_value() {
    let pod = RecordingPod::start("HTTP/1.1 200 OK\r\ncontent-length: 2, 2\r\n\r\nok").await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    for chunked in [false, true] {
        let (answer, _) = exchange(&shunt, &mk_get("", chunked)).await;
        assert!(answer.starts_with("http/1.1 200"), "{answer}");
        assert_eq!(answer.matches("content-length").count(), 1, "{answer}");
        assert!(answer.contains("\r\ncontent-length: 2\r\n"), "{answer}");
    }
}

#[tokio::test]
async fn unequal_response_content_lengths_are_a_502_and_the_pod_connection_is_closed() {
    let pod = RecordingPod::start("HTTP/1.1 200 OK\r\ncontent-length: 2, 3\r\n\r\nok").await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let (answer, _) = exchange(&shunt, &mk_get("", false)).await;
    assert!(answer.starts_with("http/1.1 502"), "{answer}");
    eventually(
        "shunt to close the pod's connection",
        Duration::from_secs(5),
        async || (pod.closed() == 1).then_some(()),
    )
    .await;
}

#[tokio::test]
async fn a_malformed_request_body_is_a_400_and_the_connection_closes() {
    let pod = RecordingPod::start(OK).await;
    let (_manifests, shunt) = serve_pod(&pod, &[]).await;
    let bodies = [
        ("a bad chunk size", "5\r\nhello\r\nzz\r\nhello\r\n0\r\n\r\n"),
        ("no crlf after a chunk", "5\r\nhelloXX0\r\n\r\n"),
        ("a bad trailer", "5\r\nhello\r\n0\r\nbad trailer line\r\n\r\n"),
    ];
    for (what, body) in bodies {
        // Keep-alive asked for: the close is shunt's.
        let request = format!("POST /x HTTP/1.1\r\nhost: {HOST}\r\ntransfer-encoding: chunked\r\n\r\n{body}");
        let (answer, closed) = exchange(&shunt, &request).await;
        assert!(answer.starts_with("http/1.1 400"), "{what}: {answer}");
        assert!(closed, "{what}: the connection stayed open");
    }
}
