//! HTTP/1.1 Upgrade through the proxy: a real WebSocket session, and a raw protocol switch,
//! with bytes flowing both ways after the 101.

use futures::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{Message, handshake::derive_accept_key, protocol::Role},
};

use crate::support::*;

const HOST: &str = "chat.example.com";

/// Accepts `Upgrade: websocket` (greets, then echoes every message) and `Upgrade: x-shout`
/// (greets with `ready\n`, then echoes bytes uppercased).
async fn upgrade_handler(mut req: Request<Incoming>) -> Response<Body> {
    let protocol = req
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let on_upgrade = hyper::upgrade::on(&mut req);
    let mut response = Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, protocol.as_str());
    match protocol.as_str() {
        "websocket" => {
            let Some(key) = req.headers().get(header::SEC_WEBSOCKET_KEY) else {
                return text(StatusCode::BAD_REQUEST, "no Sec-WebSocket-Key");
            };
            response = response.header(header::SEC_WEBSOCKET_ACCEPT, derive_accept_key(key.as_bytes()));
            tokio::spawn(async move {
                let Ok(upgraded) = on_upgrade.await else { return };
                let mut ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
                let _ = ws.send(Message::text("hello from the backend")).await;
                while let Some(Ok(message)) = ws.next().await {
                    let echo = match message {
                        Message::Text(text) => Message::text(format!("echo: {}", text.as_str())),
                        Message::Binary(bytes) => Message::Binary(bytes),
                        Message::Close(_) => break,
                        _ => continue,
                    };
                    if ws.send(echo).await.is_err() {
                        break;
                    }
                }
            });
        }
        "x-shout" => {
            tokio::spawn(async move {
                let Ok(upgraded) = on_upgrade.await else { return };
                let mut io = TokioIo::new(upgraded);
                let _ = io.write_all(b"ready\n").await;
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = io.read(&mut buf).await {
                    if io.write_all(&buf[..n].to_ascii_uppercase()).await.is_err() {
                        break;
                    }
                }
            });
        }
        _ => return text(StatusCode::BAD_REQUEST, "unknown upgrade"),
    }
    response.body(full("")).expect("a valid 101")
}

async fn serve_upgrades() -> (Backend, Manifests, Shunt) {
    let backend = Backend::http1("chat").handler(upgrade_handler).start().await;
    // x-shout is forwarded only because it is allowed; WebSocket always is.
    let (manifests, shunt) = serve_host(HOST, "chat", None, &[backend.port()], &["--allow-upgrade", "x-shout"]).await;
    (backend, manifests, shunt)
}

async fn next_message<S>(ws: &mut WebSocketStream<S>) -> Message
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match tokio::time::timeout(REQUEST_TIMEOUT, ws.next()).await {
        Ok(Some(Ok(message))) => message,
        other => panic!("expected a WebSocket message, got {other:?}"),
    }
}

#[tokio::test]
async fn websocket_messages_flow_both_ways_through_the_proxy() {
    let (_backend, _manifests, shunt) = serve_upgrades().await;
    let stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    let (mut ws, response) = tokio::time::timeout(
        REQUEST_TIMEOUT,
        tokio_tungstenite::client_async(format!("ws://{HOST}/socket"), stream),
    )
    .await
    .expect("the handshake finishes in time")
    .expect("the WebSocket handshake succeeds through shunt");
    assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);

    assert_eq!(next_message(&mut ws).await, Message::text("hello from the backend"));
    ws.send(Message::text("ping 1")).await.expect("sending a text message");
    assert_eq!(next_message(&mut ws).await, Message::text("echo: ping 1"));
    let binary: Vec<u8> = (0..=255).cycle().take(100_000).collect();
    ws.send(Message::binary(binary.clone()))
        .await
        .expect("sending a binary message");
    assert_eq!(next_message(&mut ws).await, Message::binary(binary));
    ws.close(None).await.expect("closing");
}

#[tokio::test]
async fn an_allowed_raw_protocol_upgrade_is_tunnelled_both_ways() {
    let (_backend, _manifests, shunt) = serve_upgrades().await;
    let mut stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
    let request = format!("GET /raw HTTP/1.1\r\nHost: {HOST}\r\nConnection: Upgrade\r\nUpgrade: x-shout\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("writing the upgrade request");

    let read_until = async |stream: &mut TcpStream, buf: &mut Vec<u8>, end: &[u8]| {
        let mut chunk = [0u8; 1024];
        while !buf.windows(end.len()).any(|w| w == end) {
            let n = stream.read(&mut chunk).await.expect("reading from shunt");
            assert!(
                n > 0,
                "shunt closed the tunnel early; got {:?}",
                String::from_utf8_lossy(buf)
            );
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    let mut received = Vec::new();
    let exchange = async {
        read_until(&mut stream, &mut received, b"ready\n").await;
        let head = String::from_utf8_lossy(&received).to_string();
        assert!(head.starts_with("HTTP/1.1 101"), "expected 101, got {head:?}");
        assert!(head.to_ascii_lowercase().contains("upgrade: x-shout"), "{head:?}");
        received.clear();
        stream
            .write_all(b"quiet words\n")
            .await
            .expect("writing through the tunnel");
        read_until(&mut stream, &mut received, b"\n").await;
        assert_eq!(received, b"QUIET WORDS\n");
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .expect("the tunnel answers in time");
}
