//! ingress-nginx's CORS end to end: an Ingress with `enable-cors` served by
//! `shunt serve --shadow-class nginx`, a preflight read off the wire, and the fields on the
//! pod's answers only when the Origin is allowed.

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};

use crate::support::*;

const HOST: &str = "api.example.com";
/// Redirects plain HTTP to HTTPS (`force-ssl-redirect`) and takes bodies up to 1 KiB.
const SECURE: &str = "secure.example.com";

async fn start_site() -> Site {
    let ingress = mk_ingress("shop", "api")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/enable-cors", "true")
        .annotation(
            "nginx.ingress.kubernetes.io/cors-allow-origin",
            "https://*.example.com, https://app.test:8443",
        )
        .annotation("nginx.ingress.kubernetes.io/cors-allow-methods", "GET, PUT")
        .annotation("nginx.ingress.kubernetes.io/cors-expose-headers", "X-Trace")
        .annotation("nginx.ingress.kubernetes.io/cors-max-age", "600")
        .rule(HOST, [mk_path("/", "Prefix", "web", 80)]);
    let secure = mk_ingress("shop", "secure")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/enable-cors", "true")
        .annotation("nginx.ingress.kubernetes.io/force-ssl-redirect", "true")
        .annotation("nginx.ingress.kubernetes.io/proxy-body-size", "1k")
        .rule(SECURE, [mk_path("/", "Prefix", "web", 80)]);
    Site::start("shop", &["web"], &[&ingress, &secure], &["--shadow-class", "nginx"]).await
}

fn with_origin(method: Method, origin: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri("/items")
        .header(header::HOST, HOST)
        .header(header::ORIGIN, origin)
        .body(full(Bytes::new()))
        .expect("a valid request")
}

/// The head's field lines after the status line, lowercase names, in order.
fn fields(head: &str) -> Vec<String> {
    head.lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| format!("{}: {}", name.to_ascii_lowercase(), value.trim()))
        .filter(|line| !line.starts_with("date:"))
        .collect()
}

#[tokio::test]
async fn an_allowed_preflight_is_answered_204_with_the_templates_fields_and_no_body() {
    let site = start_site().await;
    let request = format!(
        "OPTIONS /items HTTP/1.1\r\nHost: {HOST}\r\nOrigin: https://App.example.com\r\nAccess-Control-Request-Method: PUT\r\nConnection: close\r\n\r\n"
    );
    let answer = raw(site.shunt.http, request.as_bytes()).await;
    let (head, body) = answer.split_once("\r\n\r\n").expect("a whole head");
    assert!(head.starts_with("HTTP/1.1 204 "), "{answer}");
    let expected = [
        "access-control-allow-origin: https://App.example.com",
        "access-control-allow-credentials: true",
        "access-control-allow-methods: GET, PUT",
        "access-control-allow-headers: DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
        "access-control-expose-headers: X-Trace",
        "access-control-max-age: 600",
    ];
    let got = fields(head);
    let cors: Vec<&String> = got.iter().filter(|f| f.starts_with("access-control-")).collect();
    assert_eq!(cors, expected, "{answer}");
    // nginx drops a 204's Content-Type (the template's `text/plain charset=UTF-8`); its
    // `Content-Length: 0` is left out by our HTTP/1.1 writer, which states no length for a 204.
    assert!(!got.iter().any(|f| f.starts_with("content-")), "{answer}");
    assert_eq!(body, "");
}

#[tokio::test]
async fn an_allowed_origin_gets_the_fields_on_the_pods_answer_and_others_get_none() {
    let site = start_site().await;
    let allowed = site.shunt.send(with_origin(Method::GET, "https://app.test:8443")).await;
    assert_eq!(allowed.backend(), "web");
    assert_eq!(
        allowed.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://app.test:8443"
    );
    assert_eq!(allowed.headers[header::ACCESS_CONTROL_ALLOW_METHODS], "GET, PUT");
    assert_eq!(allowed.headers[header::ACCESS_CONTROL_EXPOSE_HEADERS], "X-Trace");
    assert_eq!(allowed.headers[header::ACCESS_CONTROL_MAX_AGE], "600");
    // The wildcard is one label: two are not allowed, and neither is another port.
    for origin in ["https://a.b.example.com", "https://app.test"] {
        let refused = site.shunt.send(with_origin(Method::GET, origin)).await;
        assert_eq!(refused.backend(), "web");
        assert!(
            !refused
                .headers
                .keys()
                .any(|name| name.as_str().starts_with("access-control-")),
            "{origin}: {:?}",
            refused.headers
        );
    }
}

#[tokio::test]
async fn an_options_request_from_an_origin_not_allowed_goes_to_the_pod() {
    let site = start_site().await;
    let reply = site.shunt.send(with_origin(Method::OPTIONS, "https://evil.test")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["method"], "OPTIONS");
    assert!(reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
}

/// A raw HTTP/1.1 request to [`SECURE`] that closes the connection after its answer.
async fn secure_raw(site: &Site, method: &str, extra: &str) -> String {
    let request = format!(
        "{method} /items HTTP/1.1\r\nHost: {SECURE}\r\nOrigin: https://a.test\r\n{extra}Connection: close\r\n\r\n"
    );
    raw(site.shunt.http, request.as_bytes()).await
}

#[tokio::test]
async fn the_preflight_comes_before_the_https_redirect_which_carries_the_fields() {
    let site = start_site().await;
    let preflight = secure_raw(&site, "OPTIONS", "").await;
    assert!(preflight.starts_with("HTTP/1.1 204 "), "{preflight}");
    assert!(preflight.contains("access-control-allow-origin: *\r\n"), "{preflight}");
    let redirect = secure_raw(&site, "GET", "").await;
    assert!(redirect.starts_with("HTTP/1.1 308 "), "{redirect}");
    assert!(redirect.contains("access-control-allow-origin: *\r\n"), "{redirect}");
}

#[tokio::test]
async fn a_body_declared_too_large_is_refused_before_cors_and_without_its_fields() {
    let site = start_site().await;
    for method in ["OPTIONS", "POST"] {
        let refused = secure_raw(&site, method, "Content-Length: 2048\r\n").await;
        assert!(refused.starts_with("HTTP/1.1 413 "), "{method}: {refused}");
        assert!(
            !refused.to_ascii_lowercase().contains("access-control-"),
            "{method}: {refused}"
        );
    }
}

#[tokio::test]
async fn the_preflight_is_answered_over_http2_too() {
    let site = start_site().await;
    let request = Request::builder()
        .method(Method::OPTIONS)
        .uri(format!("http://{HOST}/items"))
        .header(header::ORIGIN, "https://app.test:8443")
        .body(full(Bytes::new()))
        .expect("a valid request");
    let reply = site.shunt.send_h2(request).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    assert_eq!(
        reply.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://app.test:8443"
    );
    assert!(reply.body.is_empty());
}
