//! `proxy-ssl-secret` with its keys, end to end against HTTPS pods: the pod's chain and name are
//! checked as nginx checks them (a failed check is 502, nginx's answer to a failed upstream
//! handshake), SNI goes out only with `proxy-ssl-server-name: on`, and the Secret's keypair is
//! presented to a pod that asks for a client certificate.

use http::StatusCode;

use crate::support::*;

const HOST: &str = "verified.example.com";
/// The name the pods' certificates carry.
const POD_NAME: &str = "web.shop.svc";

/// Serves an nginx Ingress to `pod` with `backend-protocol: HTTPS`, `proxy-ssl-secret:
/// web/pods` (a Secret holding `secret`) and `extra` annotations.
async fn serve_verified(pod: &CheckedPod, secret: &[(&str, &str)], extra: &[(&str, &str)]) -> (Manifests, Shunt) {
    let mut ingress = mk_ingress("web", "secure")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/backend-protocol", "HTTPS")
        .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false")
        .annotation("nginx.ingress.kubernetes.io/proxy-ssl-secret", "web/pods");
    for (key, value) in extra {
        ingress = ingress.annotation(key, value);
    }
    let ingress = ingress.rule(HOST, [mk_path("/", "Prefix", "secure", 80)]);
    let service = mk_service_on_ports("web", "secure", None, &[pod.port()]);
    let secret = mk_string_secret("web", "pods", "Opaque", secret);
    serve(&[&ingress, &service, &secret], &["--shadow-class", "nginx"]).await
}

const VERIFY: (&str, &str) = ("nginx.ingress.kubernetes.io/proxy-ssl-verify", "on");
const NAME: (&str, &str) = ("nginx.ingress.kubernetes.io/proxy-ssl-name", POD_NAME);

/// The status `HOST/` answers, after checking shunt reached the pod (a refusal is the
/// handshake's, not a missing route).
async fn status(pod: &CheckedPod, shunt: &Shunt) -> StatusCode {
    let before = pod.connections();
    let status = shunt.get(HOST, "/").await.status;
    assert!(pod.connections() > before, "shunt connected to the pod");
    status
}

#[tokio::test]
async fn the_pod_is_reached_only_with_the_right_ca_and_name() {
    let (pods, other) = (TestCa::new("pods CA"), TestCa::new("other CA"));
    let pod = CheckedPod::start(&pods.issue(&[POD_NAME]), None).await;
    let cases = [
        (&pods, vec![VERIFY, NAME], StatusCode::OK),
        (&other, vec![VERIFY, NAME], StatusCode::BAD_GATEWAY),
        (
            &pods,
            vec![VERIFY, ("nginx.ingress.kubernetes.io/proxy-ssl-name", "api.shop.svc")],
            StatusCode::BAD_GATEWAY,
        ),
        // nginx checks the upstream block's name, `upstream_balancer`, which no pod carries.
        (&pods, vec![VERIFY], StatusCode::BAD_GATEWAY),
        // Verification off: the CA and the name are not checked.
        (&other, vec![], StatusCode::OK),
    ];
    for (index, (ca, keys, expected)) in cases.into_iter().enumerate() {
        let (_manifests, shunt) = serve_verified(&pod, &[("ca.crt", &ca.pem())], &keys).await;
        assert_eq!(status(&pod, &shunt).await, expected, "case {index}");
    }
}

#[tokio::test]
async fn sni_is_sent_only_with_proxy_ssl_server_name_on() {
    let pods = TestCa::new("pods CA");
    let pod = CheckedPod::start(&pods.issue(&[POD_NAME]), None).await;
    let sni = ("nginx.ingress.kubernetes.io/proxy-ssl-server-name", "on");
    let (_manifests, shunt) = serve_verified(&pod, &[("ca.crt", &pods.pem())], &[VERIFY, NAME, sni]).await;
    assert_eq!(status(&pod, &shunt).await, StatusCode::OK);
    drop(shunt);
    let (_manifests, shunt) = serve_verified(&pod, &[("ca.crt", &pods.pem())], &[VERIFY, NAME]).await;
    assert_eq!(status(&pod, &shunt).await, StatusCode::OK);
    assert_eq!(pod.sni(), [Some(POD_NAME.to_string()), None]);
}

#[tokio::test]
async fn the_secrets_keypair_is_presented_to_a_pod_that_asks_for_one() {
    let (pods, clients) = (TestCa::new("pods CA"), TestCa::new("clients CA"));
    let pod = CheckedPod::start(&pods.issue(&[POD_NAME]), Some(&clients)).await;
    let client = clients.issue_client(&["ingress.web.svc"]);
    let with_keypair = [
        ("ca.crt", pods.pem()),
        ("tls.crt", client.chain_pem.clone()),
        ("tls.key", client.key_pem.clone()),
    ];
    let with_keypair: Vec<(&str, &str)> = with_keypair.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (_manifests, shunt) = serve_verified(&pod, &with_keypair, &[VERIFY, NAME]).await;
    assert_eq!(status(&pod, &shunt).await, StatusCode::OK);
    drop(shunt);
    // Without the keypair the pod refuses the handshake.
    let (_manifests, shunt) = serve_verified(&pod, &[("ca.crt", &pods.pem())], &[VERIFY, NAME]).await;
    assert_eq!(status(&pod, &shunt).await, StatusCode::BAD_GATEWAY);
}

#[tokio::test]
async fn verify_depth_bounds_the_intermediates_between_the_pod_and_the_ca() {
    let root = TestCa::new("pods root");
    let one = root.intermediate("pods intermediate 1");
    let two = one.intermediate("pods intermediate 2");
    let depth = |value| ("nginx.ingress.kubernetes.io/proxy-ssl-verify-depth", value);
    let cases = [
        (&one, None, StatusCode::OK),
        (&two, None, StatusCode::BAD_GATEWAY),
        (&two, Some(depth("2")), StatusCode::OK),
    ];
    for (index, (issuer, depth, expected)) in cases.into_iter().enumerate() {
        let pod = CheckedPod::start(&issuer.issue(&[POD_NAME]), None).await;
        let keys: Vec<_> = [VERIFY, NAME].into_iter().chain(depth).collect();
        let (_manifests, shunt) = serve_verified(&pod, &[("ca.crt", &root.pem())], &keys).await;
        assert_eq!(status(&pod, &shunt).await, expected, "case {index}");
    }
}

#[tokio::test]
async fn a_connection_verified_under_one_setting_is_never_reused_under_another() {
    let (pods, other) = (TestCa::new("pods CA"), TestCa::new("other CA"));
    let pod = CheckedPod::start(&pods.issue(&[POD_NAME]), None).await;
    let ingress = |name: &str, host: &str, secret: &str| {
        mk_ingress("web", name)
            .class("nginx")
            .annotation("nginx.ingress.kubernetes.io/backend-protocol", "HTTPS")
            .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false")
            .annotation("nginx.ingress.kubernetes.io/proxy-ssl-secret", secret)
            .annotation(VERIFY.0, VERIFY.1)
            .annotation(NAME.0, NAME.1)
            .rule(host, [mk_path("/", "Prefix", "secure", 80)])
    };
    let (right, wrong) = (
        ingress("right", HOST, "web/pods"),
        ingress("wrong", "other.example.com", "web/other"),
    );
    let service = mk_service_on_ports("web", "secure", None, &[pod.port()]);
    let secrets = [("pods", pods.pem()), ("other", other.pem())]
        .map(|(name, ca)| mk_string_secret("web", name, "Opaque", &[("ca.crt", &ca)]));
    let objects: [&dyn Manifest; 5] = [&right, &wrong, &service, &secrets[0], &secrets[1]];
    // One worker: one pool, where the idle connection waits.
    let (_manifests, shunt) = serve(&objects, &["--shadow-class", "nginx", "--threads", "1"]).await;
    assert_eq!(shunt.get(HOST, "/").await.status, StatusCode::OK);
    // The verified connection is idle in the pool now; the other setting dials its own.
    assert_eq!(
        shunt.get("other.example.com", "/").await.status,
        StatusCode::BAD_GATEWAY
    );
    assert_eq!(shunt.get(HOST, "/").await.status, StatusCode::OK);
}
