//! `backend-protocol: GRPCS`: HTTP/2 to the pod over TLS (ALPN `h2`), whatever the caller
//! speaks; the pod's certificate is not checked, as nginx's `grpc_pass grpcs://` does not.

use bytes::Bytes;
use http::{Request, StatusCode, Version};

use crate::support::*;

const HOST: &str = "grpcs.example.com";

/// An nginx Ingress for [`HOST`] to `backend` with `backend-protocol: GRPCS`.
async fn serve_grpcs(backend: &TlsBackend) -> (Manifests, Shunt) {
    serve_grpcs_with(backend, &[]).await
}

async fn serve_grpcs_with(backend: &TlsBackend, extra: &[(&str, &str)]) -> (Manifests, Shunt) {
    let mut ingress = mk_ingress("web", "grpcs").class("nginx");
    for (key, value) in extra {
        ingress = ingress.annotation(key, value);
    }
    let ingress = ingress
        .annotation("nginx.ingress.kubernetes.io/backend-protocol", "GRPCS")
        .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false")
        .rule(HOST, [mk_path("/", "Prefix", "grpcs", 80)]);
    let service = mk_service_on_ports("web", "grpcs", None, &[backend.port()]);
    // The caller's side of TLS (callers here accept any certificate).
    let secret = mk_tls_secret("web", "grpcs-tls", &TestCa::new("edge CA").issue(&[HOST]));
    let ingress = with_tls(&ingress, &[(&[], "grpcs-tls")]);
    serve(&[&ingress, &service, &secret], &["--shadow-class", "nginx"]).await
}

/// A pod serving HTTP/2 over TLS only, with a certificate for another name from a CA nobody knows.
async fn start_h2_tls_pod() -> TlsBackend {
    TlsBackend::start_h2("grpcs", &TestCa::new("unknown CA").issue(&["pod.cluster.internal"])).await
}

#[tokio::test]
async fn grpcs_reaches_an_http2_tls_pod_from_an_http11_client() {
    let backend = start_h2_tls_pod().await;
    let (_manifests, shunt) = serve_grpcs(&backend).await;
    let routes = shunt.routes().await;
    assert_eq!(
        routes["backends"]["web/grpcs:80@h2-tls"]["protocol"], "h2-tls",
        "{routes}"
    );
    let reply = shunt.get(HOST, "/helloworld.Greeter/SayHello?x=1").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.version, Version::HTTP_11);
    let seen = reply.json();
    assert_eq!(seen["backend"], "grpcs");
    assert_eq!(seen["version"], "HTTP/2.0", "{seen}");
    assert_eq!(seen["authority"], HOST, "{seen}");
    assert_eq!(seen["path_and_query"], "/helloworld.Greeter/SayHello?x=1");
}

#[tokio::test]
async fn grpcs_reaches_an_http2_tls_pod_from_an_h2c_client() {
    let backend = start_h2_tls_pod().await;
    let (_manifests, shunt) = serve_grpcs(&backend).await;
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
    assert_eq!(seen["headers"]["te"], "trailers");
    assert_eq!(seen["body_len"], 10);
}

#[tokio::test]
async fn a_tls_pod_that_does_not_agree_h2_answers_502() {
    // An HTTP/1.1-only TLS pod: ALPN settles on nothing, and shunt must not send it a preface.
    let backend = TlsBackend::start("grpcs", &TestCa::new("pods CA").issue(&["pod.cluster.internal"])).await;
    let (_manifests, shunt) = serve_grpcs(&backend).await;
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.text());
    assert!(
        backend.connections() > 0,
        "refused after connecting, not for want of a connection"
    );
}

#[tokio::test]
async fn a_tls_pod_that_agrees_no_protocol_answers_502_without_being_waited_on() {
    // Without the ALPN check shunt would send its preface and wait for an answer: 504 after the
    // read timeout. With it the dial fails: 502 at once.
    let backend = TlsBackend::start_mute(&TestCa::new("pods CA").issue(&["pod.cluster.internal"])).await;
    let timeout = [("nginx.ingress.kubernetes.io/proxy-read-timeout", "1")];
    let (_manifests, shunt) = serve_grpcs_with(&backend, &timeout).await;
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.text());
    assert!(
        backend.connections() > 0,
        "refused after connecting, not for want of a connection"
    );
}

#[tokio::test]
async fn grpcs_reaches_an_http2_tls_pod_from_an_http2_over_tls_client() {
    let backend = start_h2_tls_pod().await;
    let (_manifests, shunt) = serve_grpcs(&backend).await;
    let client = TlsClient::any_certificate().alpn(&[b"h2"]);
    let mut connection = client
        .connect(shunt.https, Some(HOST))
        .await
        .expect("a TLS connection to shunt");
    assert_eq!(connection.alpn.as_deref(), Some(&b"h2"[..]), "shunt chose h2");
    let req = Request::get(format!("https://{HOST}/over/h2?q=1"))
        .body(full(Bytes::new()))
        .expect("a valid request");
    let reply = connection.send(req).await.expect("an answer over h2");
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.version, Version::HTTP_2);
    let seen = reply.json();
    assert_eq!(seen["backend"], "grpcs");
    assert_eq!(seen["version"], "HTTP/2.0", "{seen}");
    assert_eq!(seen["path_and_query"], "/over/h2?q=1");
}
