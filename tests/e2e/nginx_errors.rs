//! Custom error pages end to end, without nginx: over HTTP/1.1 and h2c a listed status is the
//! error backend's answer (which sees X-Code and X-Original-URI), a status not listed passes,
//! and an error backend that never answers costs the route's read timeout, then a 504.

use http::{Request, StatusCode};

use crate::support::*;

const INGRESS: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: pages
  annotations:
    nginx.ingress.kubernetes.io/custom-http-errors: "404"
    nginx.ingress.kubernetes.io/default-backend: errors
spec:
  ingressClassName: nginx
  rules:
  - host: pages.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: stuck
  annotations:
    nginx.ingress.kubernetes.io/custom-http-errors: "404"
    nginx.ingress.kubernetes.io/default-backend: hangs
    nginx.ingress.kubernetes.io/proxy-read-timeout: "1"
spec:
  ingressClassName: nginx
  rules:
  - host: stuck.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
"#;

/// The pod: 404 for paths under `/missing`, else its echo.
async fn start_app() -> Backend {
    Backend::http1("app")
        .handler(|request| async {
            let missing = request.uri().path().starts_with("/missing");
            let mut response = echo("app".to_string(), request).await;
            if missing {
                *response.status_mut() = StatusCode::NOT_FOUND;
            }
            response
        })
        .start()
        .await
}

#[tokio::test]
async fn a_listed_status_is_answered_by_the_error_backend_over_http1_and_h2() {
    let app = start_app().await;
    let errors = Backend::start("errors").await;
    let hangs = Backend::http1("hangs")
        .handler(|request| async {
            std::future::pending::<()>().await;
            echo("hangs".to_string(), request).await
        })
        .start()
        .await;
    let manifests = Manifests::new();
    manifests.write_text("ingress.yaml", INGRESS);
    manifests.write(
        "services.yaml",
        &[
            &mk_backend_service("shop", "app", None, &[&app]),
            &mk_backend_service("shop", "errors", None, &[&errors]),
            &mk_backend_service("shop", "hangs", None, &[&hangs]),
        ],
    );
    let shunt = Shunt::start(manifests.path(), &["--shadow-class", "nginx"]).await;

    let h1 = shunt.get("pages.example.com", "/missing/page?x=1").await;
    let h2 = shunt
        .send_h2(
            Request::get("http://pages.example.com/missing/other")
                .body(full(""))
                .unwrap(),
        )
        .await;
    for (reply, target) in [(&h1, "/missing/page?x=1"), (&h2, "/missing/other")] {
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        let seen = reply.json();
        assert_eq!(seen["backend"], "errors", "{seen}");
        assert_eq!(seen["headers"]["x-code"], "404", "{seen}");
        assert_eq!(seen["headers"]["x-original-uri"], target, "{seen}");
    }
    let passed = shunt.get("pages.example.com", "/found").await;
    assert_eq!(
        (passed.status, passed.json()["backend"].clone()),
        (StatusCode::OK, "app".into())
    );

    let stuck = shunt.get("stuck.example.com", "/missing").await;
    assert_eq!(stuck.status, StatusCode::GATEWAY_TIMEOUT, "{stuck:?}");
}
