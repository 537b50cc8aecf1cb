//! What the backend sees: X-Forwarded-* and X-Request-Id set, hop-by-hop headers gone in both
//! directions, Host and query exactly as the caller sent them.

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};

use crate::support::*;

const HOST: &str = "app.example.com";

async fn serve_app(args: &[&str]) -> Site {
    let ingress = mk_ingress("web", "app").rule(HOST, [mk_path("/", "Prefix", "app", 80)]);
    Site::start("web", &["app"], &[&ingress], args).await
}

/// `GET /` for [`HOST`] with extra request headers.
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

const FORGED: [(&str, &str); 5] = [
    ("x-forwarded-for", "203.0.113.7"),
    ("x-real-ip", "203.0.113.7"),
    ("x-forwarded-proto", "https"),
    ("x-forwarded-host", "forged.example.com"),
    ("x-forwarded-port", "443"),
];

#[tokio::test]
async fn forwarding_headers_from_an_untrusted_peer_are_replaced() {
    let site = serve_app(&[]).await;
    let reply = site.shunt.send(get_with(&FORGED)).await;
    assert_eq!(reply.seen_header("x-forwarded-for").as_deref(), Some("127.0.0.1"));
    assert_eq!(reply.seen_header("x-real-ip").as_deref(), Some("127.0.0.1"));
    assert_eq!(reply.seen_header("x-forwarded-proto").as_deref(), Some("http"));
    assert_eq!(reply.seen_header("x-forwarded-host").as_deref(), Some(HOST));
    assert_eq!(reply.seen_header("x-forwarded-port").as_deref(), Some("80"));
}

#[tokio::test]
async fn x_forwarded_for_from_a_trusted_peer_is_appended_to() {
    let site = serve_app(&["--trusted-proxies", "127.0.0.0/8"]).await;
    let reply = site.shunt.send(get_with(&FORGED)).await;
    assert_eq!(
        reply.seen_header("x-forwarded-for").as_deref(),
        Some("203.0.113.7, 127.0.0.1")
    );
    assert_eq!(reply.seen_header("x-real-ip").as_deref(), Some("203.0.113.7"));
    assert_eq!(reply.seen_header("x-forwarded-proto").as_deref(), Some("https"));
    assert_eq!(
        reply.seen_header("x-forwarded-host").as_deref(),
        Some("forged.example.com")
    );
}

#[tokio::test]
async fn a_trusted_peer_without_x_forwarded_for_starts_the_chain() {
    let site = serve_app(&["--trusted-proxies", "127.0.0.1"]).await;
    let reply = site.shunt.get(HOST, "/").await;
    assert_eq!(reply.seen_header("x-forwarded-for").as_deref(), Some("127.0.0.1"));
    assert_eq!(reply.seen_header("x-real-ip").as_deref(), Some("127.0.0.1"));
}

#[tokio::test]
async fn forwarded_proto_host_and_port_describe_the_callers_request() {
    let site = serve_app(&[]).await;
    let reply = site.shunt.get("App.Example.com:8080", "/").await;
    assert_eq!(reply.seen_header("x-forwarded-proto").as_deref(), Some("http"));
    assert_eq!(
        reply.seen_header("x-forwarded-host").as_deref(),
        Some("App.Example.com:8080")
    );
    assert_eq!(reply.seen_header("x-forwarded-port").as_deref(), Some("8080"));
}

#[tokio::test]
async fn a_request_id_is_added_when_absent_and_kept_when_present() {
    let site = serve_app(&[]).await;
    let first = site
        .shunt
        .get(HOST, "/")
        .await
        .seen_header("x-request-id")
        .expect("an X-Request-Id");
    let second = site
        .shunt
        .get(HOST, "/")
        .await
        .seen_header("x-request-id")
        .expect("an X-Request-Id");
    assert!(!first.is_empty(), "a request id has content");
    assert_ne!(first, second, "each request gets its own id");
    let kept = site
        .shunt
        .send(get_with(&[("x-request-id", "caller-chose-this")]))
        .await;
    assert_eq!(kept.seen_header("x-request-id").as_deref(), Some("caller-chose-this"));
}

#[tokio::test]
async fn hop_by_hop_request_headers_are_stripped_and_host_and_path_kept() {
    let site = serve_app(&[]).await;
    let path = "/a/b%20c//d/?q=1&r=%2F&s";
    let mut req = get_with(&[
        ("connection", "keep-alive, X-Hop"),
        ("x-hop", "secret"),
        ("keep-alive", "timeout=5"),
        ("te", "gzip"),
        ("proxy-authorization", "Basic Zm9vOmJhcg=="),
        ("proxy-connection", "keep-alive"),
        ("x-kept", "yes"),
    ]);
    *req.uri_mut() = path.parse().expect("a valid path");
    req.headers_mut()
        .insert(header::HOST, "App.Example.COM:8080".parse().expect("a valid host"));
    let reply = site.shunt.send(req).await;
    let seen = reply.json();
    for hop in [
        "connection",
        "x-hop",
        "keep-alive",
        "te",
        "proxy-authorization",
        "proxy-connection",
    ] {
        assert!(seen["headers"].get(hop).is_none(), "{hop} reached the backend: {seen}");
    }
    assert_eq!(seen["headers"]["x-kept"], "yes");
    assert_eq!(seen["headers"]["host"], "App.Example.COM:8080");
    // The path is normalised (see abuse::requests); the query string is kept byte for byte.
    assert_eq!(seen["path_and_query"], "/a/b%20c/d/?q=1&r=%2F&s");
}

#[tokio::test]
async fn te_trailers_is_the_one_te_value_forwarded() {
    let site = serve_app(&[]).await;
    let reply = site.shunt.send(get_with(&[("te", "trailers")])).await;
    assert_eq!(reply.seen_header("te").as_deref(), Some("trailers"));
}

#[tokio::test]
async fn hop_by_hop_response_headers_are_stripped() {
    let backend = Backend::http1("app")
        .handler(|_req| async {
            Response::builder()
                .header("connection", "X-Backend-Hop")
                .header("x-backend-hop", "secret")
                .header("keep-alive", "timeout=5")
                .header("proxy-authenticate", "Basic realm=\"x\"")
                .header("x-backend-kept", "yes")
                .body(full(Bytes::from_static(b"hello")))
                .expect("a valid response")
        })
        .start()
        .await;
    let (_manifests, shunt) = serve_host(HOST, "app", None, &[backend.port()], &[]).await;
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.text(), "hello");
    for hop in ["x-backend-hop", "keep-alive", "proxy-authenticate"] {
        assert!(
            reply.headers.get(hop).is_none(),
            "{hop} reached the client: {:?}",
            reply.headers
        );
    }
    let connection = reply
        .headers
        .get("connection")
        .map(|v| v.to_str().unwrap_or_default().to_ascii_lowercase());
    assert!(
        !connection.unwrap_or_default().contains("x-backend-hop"),
        "{:?}",
        reply.headers
    );
    assert_eq!(
        reply.headers.get("x-backend-kept").map(|v| v.as_bytes()),
        Some(&b"yes"[..])
    );
}
