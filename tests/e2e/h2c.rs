//! HTTP/2: clients speaking h2c prior knowledge to shunt, and Services whose port says
//! `appProtocol: kubernetes.io/h2c` spoken to in HTTP/2, trailers included (what gRPC needs).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, StatusCode, Version};
use http_body_util::BodyExt;

use crate::support::*;

const HOST: &str = "grpc.example.com";

/// An h2c-only backend answering [`echo`] plus gRPC-style trailers.
async fn start_grpc_backend() -> Backend {
    Backend::h2c("grpc")
        .handler(|req| async {
            let response = echo("grpc".to_string(), req).await;
            response.map(|body| {
                let mut trailers = HeaderMap::new();
                trailers.insert("grpc-status", HeaderValue::from_static("0"));
                trailers.insert("grpc-message", HeaderValue::from_static("ok"));
                body.with_trailers(async { Some(Ok(trailers)) }).boxed()
            })
        })
        .start()
        .await
}

/// Serves [`HOST`] from `backend`, whose Service port carries `app_protocol`.
async fn serve_grpc(backend: &Backend, app_protocol: Option<&str>) -> (Manifests, Shunt) {
    serve_host(HOST, "grpc", app_protocol, &[backend.port()], &[]).await
}

#[tokio::test]
async fn an_h2c_backend_is_spoken_to_in_http2_and_its_trailers_reach_an_http2_client() {
    let backend = start_grpc_backend().await;
    let (_manifests, shunt) = serve_grpc(&backend, Some("kubernetes.io/h2c")).await;
    let routes = shunt.routes().await;
    assert_eq!(routes["backends"]["web/grpc:80"]["protocol"], "h2c", "{routes}");

    let req = Request::post(format!("http://{HOST}/helloworld.Greeter/SayHello"))
        .version(Version::HTTP_2)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(full(Bytes::from_static(b"\0\0\0\0\x05hello")))
        .expect("a valid request");
    let reply = shunt.send_h2(req).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.version, Version::HTTP_2);
    let seen = reply.json();
    assert_eq!(seen["version"], "HTTP/2.0", "{seen}");
    assert_eq!(seen["authority"], HOST, "{seen}");
    assert_eq!(seen["path_and_query"], "/helloworld.Greeter/SayHello");
    assert_eq!(seen["headers"]["te"], "trailers");
    assert_eq!(seen["body_len"], 10);
    let trailers = reply.trailers.expect("the backend's trailers reach the client");
    assert_eq!(trailers.get("grpc-status").map(HeaderValue::as_bytes), Some(&b"0"[..]));
    assert_eq!(
        trailers.get("grpc-message").map(HeaderValue::as_bytes),
        Some(&b"ok"[..])
    );
}

#[tokio::test]
async fn an_http11_client_reaches_an_h2c_backend() {
    let backend = start_grpc_backend().await;
    let (_manifests, shunt) = serve_grpc(&backend, Some("kubernetes.io/h2c")).await;
    let reply = shunt.get(HOST, "/status?full=1").await;
    assert_eq!(reply.version, Version::HTTP_11);
    assert_eq!(reply.backend(), "grpc");
    let seen = reply.json();
    assert_eq!(seen["version"], "HTTP/2.0");
    assert_eq!(seen["path_and_query"], "/status?full=1");
    assert_eq!(
        seen["authority"], HOST,
        "the backend sees the caller's host as :authority"
    );
    let headers = &seen["headers"];
    assert!(headers.get("host").is_none(), ":authority says it: {headers}");
    assert_eq!(headers["x-forwarded-for"], "127.0.0.1");
    assert_eq!(headers["x-real-ip"], "127.0.0.1");
    assert_eq!(headers["x-forwarded-proto"], "http");
    assert_eq!(headers["x-forwarded-host"], HOST);
    assert_eq!(headers["forwarded"], format!("for=127.0.0.1;proto=http;host={HOST}"));
    let id = headers["x-request-id"].as_str().expect("a request id");
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
}

#[tokio::test]
async fn curl_with_http2_prior_knowledge_is_proxied_to_an_http11_backend() {
    let backend = Backend::start("grpc").await;
    let (_manifests, shunt) = serve_grpc(&backend, None).await;
    let port = shunt.http.port();
    let resolve = format!("{HOST}:{port}:127.0.0.1");
    let url = format!("http://{HOST}:{port}/from/curl?x=1");
    let (body, status_line) = curl(&["--http2-prior-knowledge", "--resolve", &resolve, &url]).await;
    assert_eq!(status_line, "200 2", "curl spoke HTTP/2 and got 200: {body}");
    let seen: serde_json::Value = serde_json::from_str(&body).expect("the echo report");
    assert_eq!(seen["backend"], "grpc");
    assert_eq!(seen["version"], "HTTP/1.1");
    assert_eq!(seen["path_and_query"], "/from/curl?x=1");
    assert_eq!(seen["headers"]["host"], format!("{HOST}:{port}"));
}
