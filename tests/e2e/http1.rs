//! shunt's own HTTP/1.1 loop (proxy/src/server/http1) seen from a raw TCP client: pipelined
//! requests, a connection handed to hyper mid-way and carrying on, `Connection: close`, HEAD,
//! bodies read with their head, HTTP/1.0, the pod's own fields (Date, repeated Set-Cookie).
//!
//! ```text
//! raw client ═ one connection ═▶ shunt: our loop ─(chunked, Expect, HTTP/1.0)─▶ hyper ─▶ echo backend
//! ```

use http::StatusCode;
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::support::*;

const HOST: &str = "loop.example.com";

/// `HOST` routed to `backend`.
async fn mk_shunt(backend: &Backend) -> (Manifests, Shunt) {
    serve_host(HOST, &backend.name, None, &[backend.port()], &[]).await
}

fn mk_get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n")
}

/// One response as it came off the wire.
#[derive(Debug)]
struct RawResponse {
    /// The status line.
    line: String,
    status: u16,
    /// Names lowercased, in order.
    fields: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RawResponse {
    fn field(&self, name: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// The echo backend's report; panics unless the answer is one.
    fn echo(&self) -> Value {
        assert_eq!(self.status, 200, "{self:?}");
        serde_json::from_slice(&self.body).unwrap_or_else(|error| panic!("expected an echo report ({error}): {self:?}"))
    }
}

/// A client connection read one response at a time; every read is bounded by [`REQUEST_TIMEOUT`].
struct Conn {
    stream: TcpStream,
    /// Read and not yet taken by a response.
    read: Vec<u8>,
}

impl Conn {
    async fn open(shunt: &Shunt) -> Conn {
        let stream = TcpStream::connect(shunt.http).await.expect("connecting to shunt");
        Conn {
            stream,
            read: Vec::new(),
        }
    }

    /// Writes `bytes` at once: requests in one write arrive together.
    async fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.stream.write_all(bytes.as_ref()).await.expect("writing to shunt");
    }

    /// Reads more; false at EOF.
    async fn fill(&mut self) -> bool {
        let mut buf = [0u8; 8192];
        let n = tokio::time::timeout(REQUEST_TIMEOUT, self.stream.read(&mut buf))
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "nothing more from shunt within {REQUEST_TIMEOUT:?}; unread: {:?}",
                    String::from_utf8_lossy(&self.read)
                )
            })
            .unwrap_or(0);
        self.read.extend_from_slice(&buf[..n]);
        n > 0
    }

    /// `n` bytes off the front, reading as needed.
    async fn take(&mut self, n: usize) -> Vec<u8> {
        while self.read.len() < n {
            assert!(
                self.fill().await,
                "EOF inside a response: {:?}",
                String::from_utf8_lossy(&self.read)
            );
        }
        self.read.drain(..n).collect()
    }

    /// A line without its CRLF.
    async fn line(&mut self) -> String {
        loop {
            if let Some(at) = self.read.windows(2).position(|w| w == b"\r\n") {
                let line = self.take(at + 2).await;
                return String::from_utf8_lossy(&line[..at]).into_owned();
            }
            assert!(
                self.fill().await,
                "EOF inside a line: {:?}",
                String::from_utf8_lossy(&self.read)
            );
        }
    }

    /// The next response, which must start right here; `head_request`: it has no body.
    async fn response(&mut self, head_request: bool) -> RawResponse {
        let line = self.line().await;
        assert!(line.starts_with("HTTP/1."), "not a status line: {line:?}");
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status in {line:?}"));
        let mut fields = Vec::new();
        loop {
            let field = self.line().await;
            if field.is_empty() {
                break;
            }
            let (name, value) = field.split_once(':').unwrap_or_else(|| panic!("a field: {field:?}"));
            fields.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let mut response = RawResponse {
            line,
            status,
            fields,
            body: Vec::new(),
        };
        if head_request || status < 200 || status == 204 || status == 304 {
            return response;
        }
        if let [length] = response.field("content-length")[..] {
            let length = length.parse().expect("a numeric content-length");
            response.body = self.take(length).await;
        } else if response.field("transfer-encoding") == ["chunked"] {
            response.body = self.chunked().await;
        } else {
            while self.fill().await {}
            response.body = std::mem::take(&mut self.read);
        }
        response
    }

    async fn chunked(&mut self) -> Vec<u8> {
        let mut body = Vec::new();
        loop {
            let size = self.line().await;
            let size = size.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).unwrap_or_else(|_| panic!("a chunk size: {size:?}"));
            if size == 0 {
                while !self.line().await.is_empty() {}
                return body;
            }
            body.extend(self.take(size).await);
            assert_eq!(self.take(2).await, b"\r\n", "a chunk ends with CRLF");
        }
    }

    /// Whether shunt closed the connection with nothing more to read.
    async fn closed(&mut self) -> bool {
        self.read.is_empty() && !self.fill().await
    }
}

#[tokio::test]
async fn two_pipelined_gets_in_one_write_are_answered_in_order() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    // The second head is already read with the first: the loop must keep it, not read anew.
    conn.send(mk_get("/one") + &mk_get("/two")).await;
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/one");
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/two");
    conn.send(mk_get("/three")).await;
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/three");
}

#[tokio::test]
async fn a_chunked_post_between_plain_gets_is_handed_to_hyper_on_the_same_connection() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    conn.send(mk_get("/first")).await;
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/first");
    // Hyper gets the connection with this whole write already read by our loop: the chunked
    // head, its body and the GET after it must all reach hyper.
    let chunked = format!(
        "POST /chunked HTTP/1.1\r\nHost: {HOST}\r\nTransfer-Encoding: chunked\r\n\r\n\
         5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    );
    conn.send(chunked + &mk_get("/last")).await;
    let post = conn.response(false).await.echo();
    assert_eq!(post["method"], "POST");
    assert_eq!(post["path_and_query"], "/chunked");
    assert_eq!(post["body_len"], 11);
    assert_eq!(post["body_fnv"], format!("{:016x}", fnv64(b"hello world")));
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/last");
    conn.send(mk_get("/after")).await;
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/after");
}

#[tokio::test]
async fn expect_100_continue_after_a_plain_get_gets_100_then_the_answer() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    conn.send(mk_get("/first")).await;
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/first");
    conn.send(format!(
        "POST /expect HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
    ))
    .await;
    // The body is held back until the 100: a loop that kept this request would never send it.
    let interim = conn.response(false).await;
    assert_eq!(interim.status, 100, "{interim:?}");
    conn.send("hello").await;
    let answer = conn.response(false).await.echo();
    assert_eq!(answer["path_and_query"], "/expect");
    assert_eq!(answer["body_len"], 5);
    assert_eq!(answer["body_fnv"], format!("{:016x}", fnv64(b"hello")));
    // With the body in the head's write our loop could serve it, and no 100 would come:
    // `Expect` alone must send it to hyper.
    conn.send(format!(
        "POST /eager HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello"
    ))
    .await;
    let interim = conn.response(false).await;
    assert_eq!(interim.status, 100, "{interim:?}");
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/eager");
}

#[tokio::test]
async fn connection_close_gets_a_response_saying_so_and_then_eof() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    conn.send(mk_get("/keep")).await;
    let kept = conn.response(false).await;
    assert!(kept.field("connection").is_empty(), "{kept:?}");
    conn.send(format!(
        "GET /bye HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n"
    ))
    .await;
    let last = conn.response(false).await;
    assert_eq!(last.echo()["path_and_query"], "/bye");
    assert_eq!(last.field("connection"), ["close"], "{last:?}");
    assert!(conn.closed().await, "bytes after the last response: {:?}", conn.read);
}

#[tokio::test]
async fn a_head_gets_the_length_a_get_gets_and_no_body_before_the_next_response() {
    let backend = Backend::http1("fixed")
        .handler(|_| async { text(StatusCode::OK, "0123456789") })
        .start()
        .await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    conn.send(format!("HEAD /same HTTP/1.1\r\nHost: {HOST}\r\n\r\n") + &mk_get("/same"))
        .await;
    let head = conn.response(true).await;
    assert_eq!(head.status, 200, "{head:?}");
    assert_eq!(head.field("content-length"), ["10"], "{head:?}");
    // `response` wants a status line right after the HEAD's head: a body byte there fails it.
    let get = conn.response(false).await;
    assert_eq!(get.line, "HTTP/1.1 200 OK");
    assert_eq!(get.field("content-length"), ["10"], "{get:?}");
    assert_eq!(get.body, b"0123456789");
}

#[tokio::test]
async fn a_small_post_body_in_the_write_of_its_head_reaches_the_backend_intact() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    // Every byte value, CRLFs and a head-like line included: none of it may be read as a head.
    let mut body: Vec<u8> = (0..=255u8).collect();
    body.extend_from_slice(b"\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n");
    let mut write = format!(
        "POST /upload HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    write.extend_from_slice(&body);
    write.extend_from_slice(mk_get("/after").as_bytes());
    conn.send(write).await;
    let post = conn.response(false).await.echo();
    assert_eq!(post["path_and_query"], "/upload");
    assert_eq!(post["body_len"], body.len());
    assert_eq!(post["body_fnv"], format!("{:016x}", fnv64(&body)));
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/after");
    assert_eq!(backend.hits(), 2, "no smuggled request");
}

#[tokio::test]
async fn an_http10_request_is_answered_first_on_a_connection_or_after_http11_ones() {
    let backend = Backend::start("app").await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let old = format!("GET /old HTTP/1.0\r\nHost: {HOST}\r\n\r\n");
    let mut conn = Conn::open(&shunt).await;
    conn.send(&old).await;
    let answer = conn.response(false).await;
    assert!(answer.line.starts_with("HTTP/1.0 200"), "{answer:?}");
    assert_eq!(answer.echo()["path_and_query"], "/old");
    // HTTP/1.0 without keep-alive: hyper closes after it.
    assert!(conn.closed().await, "bytes after the HTTP/1.0 answer: {:?}", conn.read);

    let mut conn = Conn::open(&shunt).await;
    conn.send(mk_get("/new") + &old).await;
    assert_eq!(conn.response(false).await.echo()["path_and_query"], "/new");
    let answer = conn.response(false).await;
    assert!(answer.line.starts_with("HTTP/1.0 200"), "{answer:?}");
    assert_eq!(answer.echo()["path_and_query"], "/old");
}

/// A pod answering with its own Date, two cookies, a mixed-case field and a private field its
/// `Connection` names (for `private`).
async fn start_fielded_backend(private: bool) -> Backend {
    Backend::http1("fields")
        .handler(move |_req| async move {
            let mut response = text(StatusCode::OK, "ok");
            let headers = response.headers_mut();
            headers.insert("date", "Tue, 24 Nov 2026 14:00:00 GMT".parse().expect("a value"));
            headers.append("set-cookie", "a=1".parse().expect("a value"));
            headers.append("set-cookie", "b=2".parse().expect("a value"));
            headers.insert("x-mixed-case", "Kept As Sent".parse().expect("a value"));
            if private {
                headers.insert("connection", "x-private".parse().expect("a value"));
                headers.insert("x-private", "secret".parse().expect("a value"));
            }
            response
        })
        .start()
        .await
}

#[tokio::test]
async fn the_pods_fields_reach_the_client_once_each_in_order_with_its_own_date() {
    let backend = start_fielded_backend(false).await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    conn.send(mk_get("/")).await;
    let response = conn.response(false).await;
    assert_eq!(response.status, 200, "{response:?}");
    // Passed as read by our loop: no second Date of ours, both cookies in their order.
    assert_eq!(
        response.field("date"),
        ["Tue, 24 Nov 2026 14:00:00 GMT"],
        "{response:?}"
    );
    assert_eq!(response.field("set-cookie"), ["a=1", "b=2"], "{response:?}");
    assert_eq!(response.field("x-mixed-case"), ["Kept As Sent"], "{response:?}");
    assert_eq!(response.field("content-length"), ["2"], "{response:?}");
    assert_eq!(response.body, b"ok");

    // The same answer through hyper (HTTP/2 prior knowledge) carries the same fields.
    let reply = shunt.send_h2(get(HOST, &format!("http://{HOST}/"))).await;
    assert_eq!(reply.status, StatusCode::OK);
    let cookies: Vec<_> = reply.headers.get_all("set-cookie").iter().collect();
    assert_eq!(cookies, ["a=1", "b=2"]);
    assert_eq!(reply.headers.get_all("date").iter().count(), 1);
    assert_eq!(reply.headers["date"], "Tue, 24 Nov 2026 14:00:00 GMT");
    assert_eq!(reply.headers["x-mixed-case"], "Kept As Sent");
}

#[tokio::test]
async fn a_field_the_pods_connection_names_does_not_reach_the_client() {
    let backend = start_fielded_backend(true).await;
    let (_manifests, shunt) = mk_shunt(&backend).await;
    let mut conn = Conn::open(&shunt).await;
    conn.send(mk_get("/")).await;
    let response = conn.response(false).await;
    assert_eq!(response.status, 200, "{response:?}");
    assert!(response.field("x-private").is_empty(), "{response:?}");
    assert_eq!(response.field("set-cookie"), ["a=1", "b=2"], "{response:?}");
}
