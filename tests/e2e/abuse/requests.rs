//! Requests in shapes the route table did not intend: paths, methods, request targets,
//! forwarding headers, split cookies, and a response framed two ways.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode, header};
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};

use crate::support::*;

const HOST: &str = "app.example.com";

/// `/` to backend `root`, `/api` to backend `api`: a path that sneaks past `/api` lands on `root`.
async fn serve_two_routes(args: &[&str]) -> Site {
    let ingress = mk_ingress("web", "app").rule(
        HOST,
        [mk_path("/", "Prefix", "root", 80), mk_path("/api", "Prefix", "api", 80)],
    );
    Site::start("web", &["root", "api"], &[&ingress], args).await
}

/// A raw HTTP/1.1 answer: status and body.
struct RawReply {
    status: u16,
    head: String,
    body: String,
}

impl RawReply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("expected JSON ({error}): {}", self.body))
    }
}

/// Sends `METHOD target` with `Host: host` as raw bytes, so hyper's client cannot tidy it.
async fn raw_request(site: &Site, method: &str, target: &str, host: &str) -> RawReply {
    let request = format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let answer = raw(site.shunt.http, request.as_bytes()).await;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    RawReply {
        status,
        head: head.to_ascii_lowercase(),
        body: body.to_string(),
    }
}

/// What a tricky request target must become: the path_and_query the backend sees and the
/// backend that answers, or `None` for 400.
fn tricky_targets() -> Vec<(String, Option<(String, &'static str)>)> {
    let ok = |target: &str, seen: &str, backend| (target.to_string(), Some((seen.to_string(), backend)));
    let bad = |target: &str| (target.to_string(), None);
    let long_climb = format!("/{}{}api/long", "seg/".repeat(1500), "../".repeat(1500));
    let long_name = format!("/api/{}", "a".repeat(8000));
    vec![
        ok("/x/../api/orders", "/api/orders", "api"),
        ok("//api/orders", "/api/orders", "api"),
        ok("/%61pi/orders", "/api/orders", "api"),
        ok("/x/%2e%2e/api/orders", "/api/orders", "api"),
        ok("/x/%2E%2e/api", "/api", "api"),
        ok("/x/.%2E/api", "/api", "api"),
        ok("/api/orders/./x", "/api/orders/x", "api"),
        ok("/api/orders/..", "/api/", "api"),
        ok("/api/..", "/", "root"),
        ok("/%2e", "/", "root"),
        ok("/api./x", "/api./x", "root"),
        ok("/api%2e/x", "/api./x", "root"),
        ok("/api/x.", "/api/x.", "api"),
        ok("/api/...", "/api/...", "api"),
        ok("/API/x", "/API/x", "root"),
        ok("/%41PI/x", "/API/x", "root"),
        ok("/api/%7euser/%c3%a9", "/api/~user/%C3%A9", "api"),
        ok("/api/a%20b%2a", "/api/a%20b%2A", "api"),
        ok("/./api//orders///?q=/../x&y=%2f", "/api/orders/?q=/../x&y=%2f", "api"),
        ok(&long_climb, "/api/long", "api"),
        ok(&long_name, &long_name, "api"),
        bad("/api%2Forders"),
        bad("/api%2forders"),
        bad("/x/..%2fapi"),
        bad("/api/%5c..%5cx"),
        bad("/a%00b"),
        bad("/../api"),
        bad("/%2e%2e/api"),
        bad("/api/../../x"),
        bad("/a%zz"),
        bad("/a%4"),
    ]
}

#[tokio::test]
async fn tricky_paths_are_routed_and_forwarded_as_their_normal_form_or_refused() {
    let site = serve_two_routes(&[]).await;
    for (target, expected) in tricky_targets() {
        let shown = &target[..target.len().min(60)];
        let reply = raw_request(&site, "GET", &target, HOST).await;
        let Some((seen, backend)) = expected else {
            assert_eq!(reply.status, 400, "{shown}: {}", reply.body);
            assert!(reply.body.starts_with("400 Bad Request: "), "{shown}: {}", reply.body);
            continue;
        };
        assert_eq!(reply.status, 200, "{shown}: {}", reply.body);
        let report = reply.json();
        assert_eq!(report["path_and_query"], seen.as_str(), "{shown}");
        assert_eq!(report["backend"], backend, "{shown}");
        let normal = raw_request(&site, "GET", &seen, HOST).await.json();
        assert_eq!(
            report["backend"], normal["backend"],
            "{shown} took another route than its normal form"
        );
        assert_eq!(
            normal["path_and_query"],
            seen.as_str(),
            "a normal path is forwarded as is"
        );
    }
}

#[tokio::test]
async fn connect_and_trace_get_405_with_allow() {
    let site = serve_two_routes(&[]).await;
    for (method, target) in [("CONNECT", "app.example.com:443"), ("TRACE", "/api")] {
        let reply = raw_request(&site, method, target, HOST).await;
        assert_eq!(reply.status, 405, "{method}: {}", reply.body);
        assert!(
            reply.head.contains("\r\nallow: get, head, post"),
            "{method}: {}",
            reply.head
        );
    }
}

#[tokio::test]
async fn an_absolute_target_naming_another_host_or_carrying_userinfo_gets_400() {
    let site = serve_two_routes(&[]).await;
    for target in [
        "http://other.example.com/api",
        "http://app.example.com:8080/api",
        "http://user:pw@app.example.com/api",
    ] {
        let reply = raw_request(&site, "GET", target, HOST).await;
        assert_eq!(reply.status, 400, "{target}: {}", reply.body);
    }
    let reply = raw_request(&site, "GET", "/api", "user@app.example.com").await;
    assert_eq!(reply.status, 400, "userinfo in Host: {}", reply.body);
    let same = raw_request(&site, "GET", "http://APP.example.com:80/x/../api?q", HOST).await;
    assert_eq!(same.status, 200, "{}", same.body);
    assert_eq!(same.json()["backend"], "api");
    assert_eq!(same.json()["path_and_query"], "/api?q");
}

#[tokio::test]
async fn a_second_host_field_gets_400_instead_of_reaching_the_pod() {
    let site = serve_two_routes(&[]).await;
    for second in ["other.example.com", HOST] {
        let reply = raw_request(&site, "GET", "/api", &format!("{HOST}\r\nHost: {second}")).await;
        assert_eq!(reply.status, 400, "second Host {second}: {}", reply.body);
    }
    let one = raw_request(&site, "GET", "/api", HOST).await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.json()["headers"]["host"], HOST);
}

#[tokio::test]
async fn an_http2_authority_naming_another_host_than_host_or_carrying_userinfo_gets_400() {
    let site = serve_two_routes(&[]).await;
    let h2 = |uri: &str, host: Option<&str>| {
        let mut req = Request::get(uri);
        if let Some(host) = host {
            req = req.header(header::HOST, host);
        }
        req.body(full(Bytes::new())).expect("a valid request")
    };
    let mismatch = site
        .shunt
        .send_h2(h2("http://app.example.com/api", Some("other.example.com")))
        .await;
    assert_eq!(mismatch.status, StatusCode::BAD_REQUEST, "{}", mismatch.text());
    let userinfo = site.shunt.send_h2(h2("http://user@app.example.com/api", None)).await;
    assert_eq!(userinfo.status, StatusCode::BAD_REQUEST, "{}", userinfo.text());
    let same = site
        .shunt
        .send_h2(h2("http://app.example.com/%61pi", Some("APP.example.com")))
        .await;
    assert_eq!(same.backend(), "api");
    // Both name the authority: only their number can refuse it.
    let mut twice = h2("http://app.example.com/api", Some("app.example.com"));
    twice
        .headers_mut()
        .append(header::HOST, http::HeaderValue::from_static("app.example.com"));
    let twice = site.shunt.send_h2(twice).await;
    assert_eq!(
        twice.status,
        StatusCode::BAD_REQUEST,
        "two host fields: {}",
        twice.text()
    );
}

fn get_with(headers: &[(&str, &str)]) -> Request<Body> {
    let mut req = get(HOST, "/");
    for (name, value) in headers {
        req.headers_mut().append(
            header::HeaderName::from_bytes(name.as_bytes()).expect("a valid header name"),
            header::HeaderValue::from_str(value).expect("a valid header value"),
        );
    }
    req
}

#[tokio::test]
async fn forwarded_from_an_untrusted_peer_is_replaced_by_shunts_element() {
    let site = serve_two_routes(&[]).await;
    let reply = site
        .shunt
        .send(get_with(&[("forwarded", "for=6.6.6.6;host=evil.example;proto=https")]))
        .await;
    assert_eq!(
        reply.seen_header("forwarded").as_deref(),
        Some("for=127.0.0.1;proto=http;host=app.example.com")
    );
}

#[tokio::test]
async fn forwarded_from_a_trusted_peer_is_kept_and_appended_to() {
    let site = serve_two_routes(&["--trusted-proxies", "127.0.0.0/8"]).await;
    let reply = site
        .shunt
        .send(get_with(&[("forwarded", "for=\"[2001:db8::1]\";proto=https")]))
        .await;
    assert_eq!(
        reply.seen_header("forwarded").as_deref(),
        Some("for=\"[2001:db8::1]\";proto=https, for=127.0.0.1;proto=http;host=app.example.com")
    );
    let fresh = site.shunt.get(HOST, "/").await;
    assert_eq!(
        fresh.seen_header("forwarded").as_deref(),
        Some("for=127.0.0.1;proto=http;host=app.example.com")
    );
}

#[tokio::test]
async fn x_real_ip_is_never_a_client_written_entry_behind_a_trusted_proxy() {
    let site = serve_two_routes(&["--trusted-proxies", "127.0.0.0/8"]).await;
    for (chain, real_ip) in [
        ("6.6.6.6, 203.0.113.9:51234", "203.0.113.9"),
        ("6.6.6.6, [2001:db8::1]:443", "2001:db8::1"),
        ("6.6.6.6, unknown", "127.0.0.1"),
        ("6.6.6.6, garbage, 127.0.0.2", "127.0.0.2"),
        ("6.6.6.6, 203.0.113.9, 127.0.0.2", "203.0.113.9"),
        ("6.6.6.6,,127.0.0.3", "127.0.0.3"),
    ] {
        let reply = site.shunt.send(get_with(&[("x-forwarded-for", chain)])).await;
        assert_eq!(reply.seen_header("x-real-ip").as_deref(), Some(real_ip), "{chain}");
        assert_eq!(
            reply.seen_header("x-forwarded-for").unwrap_or_default(),
            format!("{chain}, 127.0.0.1")
        );
    }
}

/// `GET /` over HTTP/2 with each cookie in its own field, as browsers send them.
fn split_cookies() -> Request<Body> {
    Request::get(format!("http://{HOST}/"))
        .header("cookie", "a=1")
        .header("cookie", "b=2; c=3")
        .body(full(Bytes::new()))
        .expect("a valid request")
}

#[tokio::test]
async fn http2_cookie_fields_are_joined_for_an_http11_backend() {
    let site = serve_two_routes(&[]).await;
    let reply = site.shunt.send_h2(split_cookies()).await;
    // The echo backend joins repeated fields with ", "; one joined field keeps its "; ".
    assert_eq!(reply.seen_header("cookie").as_deref(), Some("a=1; b=2; c=3"));
}

#[tokio::test]
async fn http2_cookie_fields_reach_an_h2c_backend_as_sent() {
    let backend = Backend::h2c("grpc").start().await;
    let (_manifests, shunt) = serve_host(HOST, "grpc", Some("kubernetes.io/h2c"), &[backend.port()], &[]).await;
    let reply = shunt.send_h2(split_cookies()).await;
    assert_eq!(reply.seen_header("cookie").as_deref(), Some("a=1, b=2; c=3"));
}

/// The body the raw backend sends, chunked, under a `Content-Length: 5` that does not fit it.
const CHUNKS: [&str; 3] = ["0123456789", "abcdefghijklmnopqrstuvwxyz", "!"];

/// A backend on raw TCP answering every request with both Transfer-Encoding and Content-Length.
async fn start_te_and_cl_backend() -> (u16, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding a raw backend");
    let port = listener.local_addr().expect("a bound address").port();
    let task = tokio::spawn(async move {
        // A handful of connections is all a test makes; the bound keeps the loop finite.
        for _ in 0..8 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                let read = tokio::time::timeout(Duration::from_secs(5), async {
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return false,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    true
                })
                .await;
                if read != Ok(true) {
                    return;
                }
                let mut answer =
                    String::from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n");
                for chunk in CHUNKS {
                    answer.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
                }
                answer.push_str("0\r\n\r\n");
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (port, task)
}

#[tokio::test]
async fn a_response_with_transfer_encoding_and_content_length_arrives_whole() {
    let (port, backend) = start_te_and_cl_backend().await;
    let (_manifests, shunt) = serve_host(HOST, "raw", None, &[port], &[]).await;
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.text(), CHUNKS.concat());
    assert_ne!(
        reply.headers.get(header::CONTENT_LENGTH).map(|v| v.as_bytes()),
        Some(&b"5"[..])
    );
    let h2 = shunt
        .send_h2(
            Request::get(format!("http://{HOST}/"))
                .body(full(Bytes::new()))
                .expect("a valid request"),
        )
        .await;
    assert_eq!(h2.text(), CHUNKS.concat(), "over HTTP/2 too");
    backend.abort();
}

#[tokio::test]
async fn an_empty_first_label_is_not_covered_by_a_wildcard_route() {
    let ingress = mk_ingress("web", "app").rule("*.example.com", [mk_path("/", "Prefix", "root", 80)]);
    let site = Site::start("web", &["root"], &[&ingress], &[]).await;
    assert_eq!(site.backend_for("shop.example.com", "/").await, "root");
    let reply = raw_request(&site, "GET", "/", ".example.com").await;
    assert_eq!(reply.status, 404, "{}", reply.body);
}
