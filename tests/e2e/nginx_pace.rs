//! limit-rate and limit-rate-after end to end: a 256 KiB answer of a route paced at 64 KiB/s
//! after its first 64 KiB (and buffered, `proxy-buffering: on`, as nginx paces only what it
//! buffers) cannot reach the client sooner than the 3 s the other 192 KiB take, over HTTP/1.1
//! and h2c, and arrives whole; both are counted in `shunt_responses_paced_total`. Only that lower bound is asserted: a slow machine
//! only makes it longer.

use std::time::{Duration, Instant};

use http::StatusCode;

use crate::support::*;

const HOST: &str = "paced.example.com";
const ANSWER: usize = 256 * 1024;

const INGRESS: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: paced
  annotations:
    nginx.ingress.kubernetes.io/limit-rate: "64"
    nginx.ingress.kubernetes.io/limit-rate-after: "64"
    nginx.ingress.kubernetes.io/proxy-buffering: "on"
spec:
  ingressClassName: nginx
  rules:
  - host: paced.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: files, port: {number: 80}}}}
"#;

/// The pod's answer: a fixed pattern, so a reordered or cut body shows.
fn answer() -> Vec<u8> {
    (0..ANSWER).map(|i| (i % 251) as u8).collect()
}

#[tokio::test]
async fn a_paced_answer_takes_at_least_what_its_rate_implies_and_arrives_whole() {
    let backend = Backend::http1("files")
        .handler(|_req| async { text(StatusCode::OK, answer()) })
        .start()
        .await;
    let manifests = Manifests::new();
    manifests.write_text("ingress.yaml", INGRESS);
    manifests.write(
        "services.yaml",
        &[&mk_backend_service("shop", "files", None, &[&backend])],
    );
    let shunt = Shunt::start(manifests.path(), &["--shadow-class", "nginx"]).await;
    // (256 - 64) KiB at 64 KiB/s.
    let least = Duration::from_secs(3);

    let started = Instant::now();
    let reply = collect(send_h1(shunt.http, get(HOST, "/file")).await.expect("a head"))
        .await
        .expect("a whole body");
    let took = started.elapsed();
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body.as_ref() == answer(), "HTTP/1.1: the body as the pod sent it");
    assert!(
        took >= least,
        "HTTP/1.1 answer in {took:?}, under the {least:?} its pace allows"
    );

    let started = Instant::now();
    let request = get(HOST, "/file");
    let (mut parts, body) = request.into_parts();
    parts.uri = format!("http://{HOST}/file").parse().expect("a URI");
    parts.headers.remove(http::header::HOST);
    let h2 = send_h2(shunt.http, http::Request::from_parts(parts, body)).await;
    let reply = collect(h2.expect("an h2c head")).await.expect("a whole body");
    let took = started.elapsed();
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body.as_ref() == answer(), "h2c: the body as the pod sent it");
    assert!(
        took >= least,
        "h2c answer in {took:?}, under the {least:?} its pace allows"
    );

    let metrics = shunt.admin("/metrics").await.text();
    assert!(metrics.contains("shunt_responses_paced_total 2"), "{metrics}");
}
