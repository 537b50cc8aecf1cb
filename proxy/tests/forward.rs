//! The proxy in-process, against real sockets: the failure paths a backend can produce.

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
use http::{Request, StatusCode};
use http_body_util::{Empty, Full};
use hyper_util::{
    client::legacy::Client,
    rt::{TokioExecutor, TokioIo},
};
use shunt_proxy::spec::UpstreamProtocol;
use support::{get, mk_spec, read_request_head, send, start_proxy};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// A keep-alive 200 whose body names the backend's `n`th connection.
async fn answer_with_connection_number(stream: &mut TcpStream, n: usize) {
    let body = format!("connection {n}");
    let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
    stream.write_all(head.as_bytes()).await.unwrap();
}

/// A raw HTTP/1.1 backend that answers only the first request on each connection and then
/// closes the connection as soon as the next request arrives, without answering: the race a
/// pooled connection loses when a backend's keep-alive timer fires.
async fn start_one_shot_backend(connections: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let n = connections.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::spawn(async move {
                if !read_request_head(&mut stream).await {
                    return;
                }
                answer_with_connection_number(&mut stream, n).await;
                let _ = stream.read(&mut [0u8; 8192]).await;
                drop(stream);
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_request_on_a_pooled_connection_the_backend_closed_is_retried() {
    let connections = Arc::new(AtomicUsize::new(0));
    let backend = start_one_shot_backend(connections.clone()).await;
    let proxy = start_proxy(mk_spec(UpstreamProtocol::Http1, vec![backend])).await;
    for expected in 1..=3 {
        let (status, body) = get(proxy, "/").await;
        assert_eq!(status, StatusCode::OK, "request {expected}: {body}");
        assert_eq!(body, format!("connection {expected}"));
    }
}

#[tokio::test]
async fn refused_endpoints_are_skipped_and_all_refused_is_a_502() {
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let connections = Arc::new(AtomicUsize::new(0));
    let alive = start_one_shot_backend(connections).await;
    let proxy = start_proxy(mk_spec(UpstreamProtocol::Http1, vec![dead, alive])).await;
    for _ in 0..10 {
        let (status, body) = get(proxy, "/").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let proxy = start_proxy(mk_spec(UpstreamProtocol::Http1, vec![dead])).await;
    let (status, body) = get(proxy, "/").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(body, "502 Bad Gateway: backend ns/svc:80 unreachable\n");
}

#[tokio::test]
async fn h2c_backends_see_the_callers_host_as_authority() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let backend = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let service = hyper::service::service_fn(|req: Request<hyper::body::Incoming>| async move {
            let seen = format!(
                "{:?} authority={} host={:?}",
                req.version(),
                req.uri().authority().map(|a| a.to_string()).unwrap_or_default(),
                req.headers().get("host")
            );
            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(seen))))
        });
        hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(stream), service)
            .await
            .unwrap();
    });
    let proxy = start_proxy(mk_spec(UpstreamProtocol::H2c, vec![backend])).await;
    let (status, body) = get(proxy, "/grpc.Health/Check").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, "HTTP/2.0 authority=shop.example.com host=None");
}

#[tokio::test]
async fn a_backend_without_endpoints_is_a_503_and_an_unknown_host_a_404() {
    let proxy = start_proxy(mk_spec(UpstreamProtocol::Http1, vec![])).await;
    let (status, body) = get(proxy, "/").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body,
        "503 Service Unavailable: backend ns/svc:80 has no ready endpoints\n"
    );
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let req = Request::get(format!("http://{proxy}/"))
        .header("host", "other.example.com")
        .body(Empty::new())
        .unwrap();
    let response = client.request(req).await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

/// A raw HTTP/1.1 backend that answers one request per connection with keep-alive, then closes
/// the connection (a backend's keep-alive timers firing while the connections sit idle in our
/// pool); `closed` counts the connections it closed. The first `together` connections are
/// answered only once all of them have a request, so the proxy has to open that many.
async fn start_close_after_answer_backend(together: usize, closed: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(together));
    tokio::spawn(async move {
        for n in 1..=16 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (closed, barrier) = (closed.clone(), barrier.clone());
            tokio::spawn(async move {
                if !read_request_head(&mut stream).await {
                    return;
                }
                if n <= together {
                    barrier.wait().await;
                }
                answer_with_connection_number(&mut stream, n).await;
                // Later than the proxy's read of the answer, so the close finds the connection idle.
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(stream);
                closed.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_post_after_the_backend_closed_every_idle_connection_goes_on_a_new_one() {
    let closed = Arc::new(AtomicUsize::new(0));
    let backend = start_close_after_answer_backend(3, closed.clone()).await;
    let proxy = start_proxy(mk_spec(UpstreamProtocol::Http1, vec![backend])).await;
    let gets: Vec<_> = (0..3).map(|_| tokio::spawn(get(proxy, "/"))).collect();
    for reply in gets {
        let (status, body) = reply.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // The three pooled connections are closed by now: their FINs wait in our sockets.
    for _ in 0..200 {
        if closed.load(Ordering::SeqCst) == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(closed.load(Ordering::SeqCst), 3);
    // Not idempotent and retried at most once when unprocessed: taking two dead connections in
    // a row would fail it, so the pool must notice they closed.
    let req = Request::post(format!("http://{proxy}/orders"))
        .header("host", "shop.example.com")
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let (status, body) = send(req).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, "connection 4");
}
