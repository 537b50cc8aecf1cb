//! The HTTP/1.1 upstream client against raw TCP backends: framing, interim responses, early
//! answers, bounds, and when a connection is kept or closed.

mod support;

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper_util::{client::legacy::Client, rt::TokioExecutor};
use shunt_proxy::spec::UpstreamProtocol;
use support::{get, mk_spec, respond, start_proxy};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// One request as the raw backend read it.
struct Seen {
    head: String,
    body: Vec<u8>,
}

/// What the raw backend does after a request: write `bytes`, then keep the connection for the
/// next request, or close it.
struct Answer {
    bytes: Vec<u8>,
    close: bool,
}

fn mk_answer(text: &str) -> Answer {
    Answer {
        bytes: text.as_bytes().to_vec(),
        close: false,
    }
}

/// A keep-alive 200 whose body names the connection (`n`, counted from 1) it came on.
fn mk_numbered(n: usize) -> Answer {
    let body = format!("connection {n}");
    mk_answer(&format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    ))
}

/// A raw backend: each request on each connection gets `answer(connection number, request)`.
/// Bounded: 16 connections, 64 requests on each, 5 s per read.
async fn start_backend<F>(answer: F) -> SocketAddr
where
    F: Fn(usize, &Seen) -> Answer + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    let count = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        for _ in 0..16 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let answer = answer.clone();
            tokio::spawn(async move {
                for _ in 0..64 {
                    let Some(seen) = read_request(&mut stream).await else {
                        return;
                    };
                    let reply = answer(n, &seen);
                    if stream.write_all(&reply.bytes).await.is_err() || reply.close {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Reads a request head and its body (by `content-length`, or chunked); `None` when the peer
/// closed or went quiet for 5 s.
async fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let read = async {
        let end = loop {
            if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let n = stream.read(&mut buf).await.ok().filter(|&n| n > 0)?;
            seen.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&seen[..end]).to_lowercase();
        let mut body = seen.split_off(end);
        let done = |body: &[u8]| match field(&head, "content-length") {
            Some(length) => body.len() >= length.parse::<usize>().unwrap(),
            None if head.contains("transfer-encoding: chunked") => body.ends_with(b"0\r\n\r\n"),
            None => true,
        };
        while !done(&body) {
            let n = stream.read(&mut buf).await.ok().filter(|&n| n > 0)?;
            body.extend_from_slice(&buf[..n]);
        }
        Some(Seen { head, body })
    };
    tokio::time::timeout(Duration::from_secs(5), read).await.ok().flatten()
}

/// A field's value in a lowercased head.
fn field<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Decodes a chunked body as the backend got it.
fn dechunk(mut wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..wire.len() + 1 {
        let line_end = wire.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&wire[..line_end]).unwrap(), 16).unwrap();
        wire = &wire[line_end + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(&wire[..size]);
        wire = &wire[size + 2..];
    }
    out
}

async fn start(answer: impl Fn(usize, &Seen) -> Answer + Send + Sync + 'static) -> SocketAddr {
    let backend = start_backend(answer).await;
    start_proxy(mk_spec(UpstreamProtocol::Http1, vec![backend])).await
}

/// Sends `req` through the proxy: status, headers, and the body or the error reading it.
async fn exchange<B>(
    req: Request<B>,
) -> (
    StatusCode,
    http::HeaderMap,
    Result<(Bytes, Option<http::HeaderMap>), String>,
)
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = respond(req).await.into_parts();
    let collected = tokio::time::timeout(Duration::from_secs(10), body.collect())
        .await
        .unwrap();
    let body = collected
        .map(|c| {
            let trailers = c.trailers().cloned();
            (c.to_bytes(), trailers)
        })
        .map_err(|e| e.to_string());
    (parts.status, parts.headers, body)
}

fn mk_request(method: Method, path: &str) -> Request<Empty<Bytes>> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", "shop.example.com")
        .body(Empty::new())
        .unwrap()
}

fn at(proxy: SocketAddr, mut req: Request<Empty<Bytes>>) -> Request<Empty<Bytes>> {
    *req.uri_mut() = format!("http://{proxy}{}", req.uri()).parse().unwrap();
    req
}

#[tokio::test]
async fn sequential_requests_reuse_one_connection() {
    let proxy = start(|n, _| mk_numbered(n)).await;
    for _ in 0..5 {
        let (status, body) = get(proxy, "/").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "connection 1"));
    }
}

#[tokio::test]
async fn connection_close_from_the_pod_closes_the_connection() {
    let proxy = start(|n, _| Answer {
        close: true,
        ..mk_answer(&format!(
            "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\n{n}"
        ))
    })
    .await;
    for n in 1..=3 {
        assert_eq!(get(proxy, "/").await, (StatusCode::OK, n.to_string()));
    }
}

#[tokio::test]
async fn a_close_delimited_body_is_read_to_the_end_and_its_connection_not_reused() {
    let proxy = start(|n, _| Answer {
        close: true,
        ..mk_answer(&format!("HTTP/1.1 200 OK\r\n\r\nall until close {n}"))
    })
    .await;
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "all until close 1".into()));
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "all until close 2".into()));
}

#[tokio::test]
async fn a_chunked_body_and_its_trailers_reach_a_client_that_accepts_trailers() {
    let proxy = start(|n, _| {
        mk_answer(&format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntrailer: x-sum\r\n\r\n\
             5;ext=1\r\nhello\r\n1\r\n{n}\r\n0\r\nx-sum: 42\r\n\r\n"
        ))
    })
    .await;
    for n in 1..=2 {
        let mut req = at(proxy, mk_request(Method::GET, "/"));
        req.headers_mut().insert(header::TE, "trailers".parse().unwrap());
        let (status, _, body) = exchange(req).await;
        let (data, trailers) = body.unwrap();
        assert_eq!(status, StatusCode::OK);
        // Both on the first connection: the chunked body ended cleanly.
        assert_eq!(data, format!("hello1"), "request {n}");
        assert_eq!(trailers.expect("trailers")["x-sum"], "42");
    }
}

#[tokio::test]
async fn a_head_response_with_a_length_has_no_body_and_keeps_the_connection() {
    let proxy = start(|n, seen| {
        if seen.head.starts_with("head ") {
            mk_answer("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n")
        } else {
            mk_numbered(n)
        }
    })
    .await;
    let (status, headers, body) = exchange(at(proxy, mk_request(Method::HEAD, "/"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_LENGTH], "100");
    assert!(body.unwrap().0.is_empty());
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "connection 1".into()));
}

#[tokio::test]
async fn responses_204_and_304_have_no_body_and_keep_the_connection() {
    let proxy = start(|n, seen| match seen.head.split(' ').nth(1) {
        Some("/204") => mk_answer("HTTP/1.1 204 No Content\r\n\r\n"),
        Some("/304") => mk_answer("HTTP/1.1 304 Not Modified\r\ncontent-length: 50\r\n\r\n"),
        _ => mk_numbered(n),
    })
    .await;
    assert_eq!(get(proxy, "/204").await, (StatusCode::NO_CONTENT, String::new()));
    assert_eq!(get(proxy, "/304").await, (StatusCode::NOT_MODIFIED, String::new()));
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "connection 1".into()));
}

#[tokio::test]
async fn interim_100_and_103_responses_are_skipped() {
    let proxy = start(|_, _| {
        mk_answer(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\n\
             HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfinal",
        )
    })
    .await;
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "final".into()));
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "final".into()));
}

#[tokio::test]
async fn a_response_head_over_the_bound_is_a_502() {
    let big = "v".repeat(70 * 1024);
    let proxy =
        start(move |_, _| mk_answer(&format!("HTTP/1.1 200 OK\r\nx-big: {big}\r\ncontent-length: 0\r\n\r\n"))).await;
    assert_eq!(get(proxy, "/").await.0, StatusCode::BAD_GATEWAY);
}

#[tokio::test]
async fn a_pod_closing_mid_body_truncates_the_response_and_its_connection_is_not_reused() {
    let proxy = start(|n, _| {
        if n == 1 {
            Answer {
                close: true,
                ..mk_answer("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly ten b")
            }
        } else {
            mk_numbered(n)
        }
    })
    .await;
    // The client sees the cut: the body fails, or the whole response when the proxy's server had
    // not flushed the head yet.
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let read = async {
        let response = client.request(at(proxy, mk_request(Method::GET, "/"))).await?;
        response.into_body().collect().await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    };
    let read = tokio::time::timeout(Duration::from_secs(10), read).await.unwrap();
    assert!(read.is_err(), "the client saw a whole response");
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "connection 2".into()));
}

#[tokio::test]
async fn content_length_beside_transfer_encoding_reads_by_chunks_and_closes_the_connection() {
    let proxy = start(|n, _| {
        mk_answer(&format!(
            "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n6\r\nconn {n}\r\n0\r\n\r\n"
        ))
    })
    .await;
    let (status, headers, body) = exchange(at(proxy, mk_request(Method::GET, "/"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(
        headers.get(header::CONTENT_LENGTH).map(|v| v.as_bytes()),
        Some(&b"3"[..])
    );
    assert_eq!(body.unwrap().0, "conn 1");
    assert_eq!(get(proxy, "/").await, (StatusCode::OK, "conn 2".into()));
}

#[tokio::test]
async fn differing_content_lengths_from_the_pod_are_a_502() {
    let proxy = start(|_, _| mk_answer("HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd")).await;
    assert_eq!(get(proxy, "/").await.0, StatusCode::BAD_GATEWAY);
}

#[tokio::test]
async fn a_body_of_unknown_length_goes_chunked_and_a_known_one_by_length() {
    let proxy = start(|_, seen| {
        let framing = if seen.head.contains("transfer-encoding: chunked") {
            assert!(field(&seen.head, "content-length").is_none());
            format!("chunked {}", String::from_utf8_lossy(&dechunk(&seen.body)))
        } else {
            format!("length {}", String::from_utf8_lossy(&seen.body))
        };
        mk_answer(&format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{framing}",
            framing.len()
        ))
    })
    .await;
    let uri = format!("http://{proxy}/up");
    let frames = ["one ", "two ", "three"].map(|s| Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from(s))));
    let stream = StreamBody::new(futures::stream::iter(frames));
    let req = Request::post(&uri)
        .header("host", "shop.example.com")
        .body(stream)
        .unwrap();
    let (status, _, body) = exchange(req).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.unwrap().0, "chunked one two three");
    let req = Request::post(&uri)
        .header("host", "shop.example.com")
        .body(Full::new(Bytes::from_static(b"{\"a\":1}")))
        .unwrap();
    let (_, _, body) = exchange(req).await;
    assert_eq!(body.unwrap().0, "length {\"a\":1}");
}

#[tokio::test]
async fn an_early_413_while_a_large_post_is_sent_is_forwarded_and_the_connection_not_reused() {
    // A backend that answers 413 after the head and never reads the body.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let early = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        for n in 1..=4 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buf[..read]),
                    }
                }
                let reply = format!("HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\n\r\ntoo big {n}");
                let _ = stream.write_all(reply.as_bytes()).await;
                // Holds the socket without reading, until the proxy closes it.
                let _ = tokio::time::timeout(Duration::from_secs(5), async {
                    while !matches!(stream.read(&mut buf).await, Ok(0) | Err(_)) {}
                })
                .await;
            });
        }
    });
    let proxy = start_proxy(mk_spec(UpstreamProtocol::Http1, vec![early])).await;
    // A raw client: writes a 32 MiB body in the background, reads the answer meanwhile.
    let mut client = TcpStream::connect(proxy).await.unwrap();
    let length = 32 * 1024 * 1024;
    let head = format!("POST /upload HTTP/1.1\r\nhost: shop.example.com\r\ncontent-length: {length}\r\n\r\n");
    client.write_all(head.as_bytes()).await.unwrap();
    let (mut read_half, mut write_half) = client.into_split();
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..length / chunk.len() {
            if write_half.write_all(&chunk).await.is_err() {
                return;
            }
        }
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(Duration::from_secs(10), async {
        while !answer.windows(9).any(|w| w == b"too big 1") {
            let read = read_half.read(&mut buf).await.unwrap();
            assert!(
                read > 0,
                "closed before the answer: {}",
                String::from_utf8_lossy(&answer)
            );
            answer.extend_from_slice(&buf[..read]);
        }
    })
    .await
    .expect("the early answer arrives while the body is still being sent");
    assert!(
        answer.starts_with(b"HTTP/1.1 413"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    writer.abort();
    // The cut-short connection is not reused: the next request opens a second one.
    let (status, body) = get(proxy, "/").await;
    assert_eq!((status, body.as_str()), (StatusCode::PAYLOAD_TOO_LARGE, "too big 2"));
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}
