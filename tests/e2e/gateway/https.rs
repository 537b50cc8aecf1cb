//! HTTPS listeners: TLS terminated with the certificate a listener's `certificateRefs` name.

use super::*;

/// httproute-https-listener: a route by hostname through the listener without one, another
/// through the listener named `second-example.org`; both answered over TLS with the Secret's
/// certificate (the client trusts only its CA, so a fallback certificate would fail).
#[tokio::test]
async fn https_listener() {
    let ca = TestCa::new("gateway-ca");
    let leaf = ca.issue(&["example.org", "second-example.org"]);
    let secret = to_yaml(&[mk_tls_secret(INFRA, "tls-validity-checks-certificate", &leaf)]);
    let certificate = "tls: {certificateRefs: [{group: '', kind: Secret, name: tls-validity-checks-certificate}]}";
    let gateway = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: {INFRA}, name: same-namespace-with-https-listener}}\n\
         spec: {{gatewayClassName: shunt, listeners: [\
           {{name: https, port: 443, protocol: HTTPS, {certificate}}}, \
           {{name: https-with-hostname, port: 443, protocol: HTTPS, hostname: second-example.org, {certificate}}}]}}\n"
    );
    let route = |name: &str, parent: &str, hostnames: &str, backend: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
             metadata: {{namespace: {INFRA}, name: {name}}}\n\
             spec: {{parentRefs: [{parent}], hostnames: {hostnames}, rules: [{{backendRefs: [{{name: {backend}, port: 8080}}]}}]}}\n"
        )
    };
    let routes = [
        route(
            "httproute-https-test",
            "{name: same-namespace-with-https-listener}",
            "[example.org]",
            "infra-backend-v1",
        ),
        route(
            "httproute-https-test-no-hostname",
            "{name: same-namespace-with-https-listener, sectionName: https-with-hostname}",
            "[]",
            "infra-backend-v2",
        ),
    ];
    let site = Conformance::start(&format!("{secret}\n{gateway}{}", routes.concat())).await;
    let client = ca.client();
    for (host, backend) in [
        ("example.org", "infra-backend-v1"),
        ("second-example.org", "infra-backend-v2"),
    ] {
        let reply = client.send(site.shunt.https, Some(host), get(host, "/")).await;
        assert_eq!(reply.backend(), backend, "{host}");
    }
    // The HTTPS listeners' routes are not served on the plain listener.
    assert_eq!(
        site.shunt.get("example.org", "/").await.status,
        http::StatusCode::NOT_FOUND
    );
}
