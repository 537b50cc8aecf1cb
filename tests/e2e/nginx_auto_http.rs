//! `backend-protocol: AUTO_HTTP` end to end: nginx's `proxy_pass $scheme://` speaks to the pod
//! over TLS for a caller over TLS and in cleartext for the others, on the same port, with the
//! `proxy-ssl-*` lines for the TLS half alone.

use http::StatusCode;

use crate::support::*;

const HOST: &str = "auto.example.com";

/// Serves an nginx Ingress for `HOST` (with a certificate, no HTTPS redirect) to `pod` with
/// `backend-protocol: AUTO_HTTP`, beside `secret`, with `extra` annotations.
async fn serve_auto(pod: &DualPod, ca: &TestCa, secret: &[(&str, &str)], extra: &[(&str, &str)]) -> (Manifests, Shunt) {
    let mut ingress = mk_ingress("web", "auto")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/backend-protocol", "AUTO_HTTP")
        .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false");
    for (key, value) in extra {
        ingress = ingress.annotation(key, value);
    }
    let ingress = with_tls(
        &ingress.rule(HOST, [mk_path("/", "Prefix", "auto", 80)]),
        &[(&[], "auto-tls")],
    );
    let service = mk_service_on_ports("web", "auto", None, &[pod.port()]);
    let certificate = mk_tls_secret("web", "auto-tls", &ca.issue(&[HOST]));
    let secret = mk_string_secret("web", "pods", "Opaque", secret);
    serve(
        &[&ingress, &service, &certificate, &secret],
        &["--shadow-class", "nginx"],
    )
    .await
}

async fn over_tls(shunt: &Shunt) -> Reply {
    TlsClient::any_certificate()
        .send(shunt.https, Some(HOST), get(HOST, "/"))
        .await
}

#[tokio::test]
async fn a_caller_over_tls_reaches_the_pod_over_tls_and_a_cleartext_caller_in_cleartext() {
    let ca = TestCa::new("auto CA");
    let pod = DualPod::start(&ca.issue(&["pod.cluster.internal"])).await;
    let (_manifests, shunt) = serve_auto(&pod, &ca, &[], &[]).await;
    assert_eq!(shunt.get(HOST, "/").await.backend(), "cleartext");
    assert_eq!(over_tls(&shunt).await.backend(), "tls");
    // The pooled connections of one kind never carry the other's requests.
    assert_eq!(shunt.get(HOST, "/").await.backend(), "cleartext");
    assert_eq!(over_tls(&shunt).await.backend(), "tls");
}

#[tokio::test]
async fn proxy_ssl_verification_applies_to_the_tls_half_alone() {
    let (ca, other) = (TestCa::new("auto CA"), TestCa::new("other CA"));
    let pod = DualPod::start(&ca.issue(&["web.shop.svc"])).await;
    let keys = [
        ("nginx.ingress.kubernetes.io/proxy-ssl-secret", "web/pods"),
        ("nginx.ingress.kubernetes.io/proxy-ssl-verify", "on"),
        ("nginx.ingress.kubernetes.io/proxy-ssl-name", "web.shop.svc"),
    ];
    let (_manifests, shunt) = serve_auto(&pod, &ca, &[("ca.crt", &ca.pem())], &keys).await;
    assert_eq!(over_tls(&shunt).await.backend(), "tls");
    drop(shunt);
    // A CA that did not issue the pod's certificate: the handshake fails (502), cleartext is untouched.
    let (_manifests, shunt) = serve_auto(&pod, &ca, &[("ca.crt", &other.pem())], &keys).await;
    assert_eq!(over_tls(&shunt).await.status, StatusCode::BAD_GATEWAY);
    assert_eq!(shunt.get(HOST, "/").await.backend(), "cleartext");
}
