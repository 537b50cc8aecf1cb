//! limit-connections end to end: requests in progress from one address are counted until their
//! response body is done, as nginx's `limit_conn` counts them until the request ends; one more
//! gets 503 and is counted in `shunt_requests_limited_total`.

use std::sync::Arc;

use http::StatusCode;
use http_body_util::BodyExt;
use tokio::sync::Notify;

use crate::support::*;

const HOST: &str = "busy.example.com";

const INGRESS: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: busy
  annotations:
    nginx.ingress.kubernetes.io/limit-connections: "2"
spec:
  ingressClassName: nginx
  rules:
  - host: busy.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: files, port: {number: 80}}}}
"#;

#[tokio::test]
async fn a_third_request_in_progress_from_one_address_gets_503_until_one_ends() {
    let release = Arc::new(Notify::new());
    let backend_release = release.clone();
    let backend = Backend::http1("files")
        .handler(move |_req| {
            let response = held_stream(b"first\n", backend_release.clone(), b"last\n");
            async move { response }
        })
        .start()
        .await;
    let manifests = Manifests::new();
    manifests.write_text("ingress.yaml", INGRESS);
    manifests.write(
        "services.yaml",
        &[&mk_backend_service("shop", "files", None, &[&backend])],
    );
    let shunt = Shunt::start(manifests.path(), &["--shadow-class", "nginx"]).await;

    // Two responses whose bodies the pod holds: both still in progress.
    let first = send_h1(shunt.http, get(HOST, "/a")).await.expect("first head");
    let second = send_h1(shunt.http, get(HOST, "/b")).await.expect("second head");
    assert_eq!((first.status(), second.status()), (StatusCode::OK, StatusCode::OK));

    let third = shunt.get(HOST, "/c").await;
    assert_eq!(third.status, StatusCode::SERVICE_UNAVAILABLE, "{third:?}");

    // The first body ends: its place is free again.
    release.notify_waiters();
    let done = tokio::time::timeout(REQUEST_TIMEOUT, first.into_body().collect())
        .await
        .expect("the held body ends")
        .expect("a whole body");
    assert_eq!(done.to_bytes().as_ref(), b"first\nlast\n");
    // shunt frees the place once it has finished the response, a moment after the client read
    // the last byte: under load a request right then may still find both places taken.
    let mut limited = 1;
    let fourth = loop {
        let response = send_h1(shunt.http, get(HOST, "/d")).await.expect("fourth head");
        if response.status() != StatusCode::SERVICE_UNAVAILABLE || limited > 50 {
            break response;
        }
        limited += 1;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(fourth.status(), StatusCode::OK);
    drop((second, fourth));

    let metrics = shunt.admin("/metrics").await.text();
    assert!(
        metrics.contains(&format!(
            "shunt_requests_limited_total{{limit=\"connections\"}} {limited}"
        )),
        "{metrics}"
    );
}
