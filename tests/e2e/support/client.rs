//! Clients that talk to shunt the way callers do: HTTP/1.1 and HTTP/2 prior knowledge, each
//! request on a fresh loopback connection, and raw bytes for what hyper will not send.

use std::{net::SocketAddr, time::Duration};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, Version, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use super::{Body, BoxError, full};

/// Bounds every request a test makes: a hung proxy fails the test instead of stalling the suite.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A whole response, body and trailers collected.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub version: Version,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub trailers: Option<HeaderMap>,
}

// === impl Reply ===

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON, e.g. a backend's [`super::echo`] report.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("expected JSON ({error}), got {} {:?}", self.status, self.text()))
    }

    /// The name of the echo backend that answered; panics with the response when none did.
    pub fn backend(&self) -> String {
        assert_eq!(
            self.status,
            StatusCode::OK,
            "expected a backend's answer, got {:?}",
            self.text()
        );
        self.json()["backend"]
            .as_str()
            .expect("an echo report names its backend")
            .to_string()
    }

    /// A request header as the echo backend saw it.
    pub fn seen_header(&self, name: &str) -> Option<String> {
        self.json()["headers"][name].as_str().map(str::to_string)
    }
}

/// `GET path` with `Host: host`, as an HTTP/1.1 client sends it (origin-form URI).
pub fn get(host: &str, path: &str) -> Request<Body> {
    Request::get(path)
        .header(header::HOST, host)
        .body(full(Bytes::new()))
        .expect("a valid request")
}

/// Sends one request over a new HTTP/1.1 connection; the body streams as the caller reads it.
pub async fn send_h1(addr: SocketAddr, req: Request<Body>) -> Result<Response<Incoming>, BoxError> {
    h1_over(TcpStream::connect(addr).await?, req).await
}

/// [`send_h1`] from a chosen loopback address (`127.0.0.2`: any of 127.0.0.0/8 reaches a
/// loopback listener), for a server that tells callers apart by address.
pub async fn send_h1_from(
    from: std::net::IpAddr,
    addr: SocketAddr,
    req: Request<Body>,
) -> Result<Response<Incoming>, BoxError> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    h1_over(socket.connect(addr).await?, req).await
}

async fn h1_over(stream: TcpStream, req: Request<Body>) -> Result<Response<Incoming>, BoxError> {
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move { drop(connection.with_upgrades().await) });
    Ok(tokio::time::timeout(REQUEST_TIMEOUT, sender.send_request(req)).await??)
}

/// Sends one request over a new HTTP/2 prior-knowledge connection. The URI must be absolute:
/// its authority becomes `:authority`, which is what shunt routes on.
pub async fn send_h2(addr: SocketAddr, req: Request<Body>) -> Result<Response<Incoming>, BoxError> {
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await?;
    tokio::spawn(async move { drop(connection.await) });
    Ok(tokio::time::timeout(REQUEST_TIMEOUT, sender.send_request(req)).await??)
}

/// Reads the rest of a response: its body and trailers.
pub async fn collect(response: Response<Incoming>) -> Result<Reply, BoxError> {
    let (parts, body) = response.into_parts();
    let collected = tokio::time::timeout(REQUEST_TIMEOUT, body.collect()).await??;
    let trailers = collected.trailers().cloned();
    Ok(Reply {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        body: collected.to_bytes(),
        trailers,
    })
}

/// Writes `request` as raw bytes and returns what came back: one response with a
/// `content-length`, or everything until the server closed the connection or [`REQUEST_TIMEOUT`].
pub async fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connecting to shunt");
    stream.write_all(request).await.expect("writing a raw request");
    let mut answer = Vec::new();
    let read = tokio::time::timeout(REQUEST_TIMEOUT, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
            // One response is all we asked for: stop once its head and declared body are in.
            if head_complete_with_body(&answer) {
                break;
            }
        }
    })
    .await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(
        read.is_ok() || !answer.is_empty(),
        "no answer to a raw request within {REQUEST_TIMEOUT:?}"
    );
    answer
}

/// True once a response with `content-length` has all of its body.
fn head_complete_with_body(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok());
    length.is_some_and(|length| body.len() >= length)
}

// === curl ===

/// Runs `curl <args>` (silent, at most 10 s) and returns its body and the line
/// `--write-out '%{http_code} %{http_version}'` adds, e.g. `"200 2"`; panics unless curl exits 0.
pub async fn curl(args: &[&str]) -> (String, String) {
    let run = tokio::process::Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "10"])
        .args(args)
        .args(["--write-out", "\n%{http_code} %{http_version}"])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(15), run)
        .await
        .expect("curl finishes")
        .expect("curl runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "curl {args:?} failed: {stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (body, status_line) = stdout.rsplit_once('\n').expect("curl's write-out line");
    (body.to_string(), status_line.to_string())
}
