//! What the pod is sent and what the client gets back: ingress-nginx's forwarding fields, the
//! client's fields nginx drops or replaces, X-Original-URI on the ConfigMap's request, the
//! pod's fields nginx hides, and upstream-vhost.

use super::{
    case::{Verdict, case, check},
    probe::{Payload, Probe},
};

const PLAIN: &str = "plain.example.com";

#[tokio::test]
async fn the_pod_sees_the_forwarding_fields_ingress_nginx_sends_and_none_of_the_clients() {
    let forged = Probe::get(PLAIN, "/a/b?c=d&e=%2F")
        .header("x-forwarded-for", "203.0.113.7")
        .header("x-forwarded-host", "public.example.com")
        .header("x-forwarded-proto", "https")
        .header("x-forwarded-port", "8443")
        .header("x-forwarded-scheme", "https")
        .header("x-real-ip", "203.0.113.8")
        .header("x-scheme", "https")
        .header("forwarded", "for=203.0.113.9;proto=https")
        .header("proxy", "http://attacker.example")
        .header("x_under_score", "dropped")
        .header("te", "trailers")
        .header("keep-alive", "timeout=5")
        .header("x-custom", "kept")
        .header("x-multi", "one")
        .header("x-multi", "two")
        .header("user-agent", "probe/1.0");
    let probes = [
        Probe::get(PLAIN, "/"),
        forged,
        Probe::get(PLAIN, "/id").header("x-request-id", "client-chosen-id-123"),
        Probe::get("Plain.Example.COM", "/case"),
        Probe::post(PLAIN, "/upload", Payload::Sized(5000))
            .header("content-type", "application/octet-stream")
            .header("expect", "100-continue"),
        Probe::post(PLAIN, "/stream", Payload::Chunked(3000)),
    ];
    check(case!("headers", &[]), &probes, &[(PLAIN, Verdict::Identical)]).await;
}

#[tokio::test]
async fn x_original_uri_is_sent_when_the_configmap_asks_for_it() {
    let probes = [
        Probe::get(PLAIN, "/orig/path?q=1&r=%20"),
        Probe::get(PLAIN, "/").header("x-original-uri", "/forged"),
    ];
    check(case!("original_uri", &[]), &probes, &[(PLAIN, Verdict::Identical)]).await;
}

#[tokio::test]
async fn the_pods_server_date_x_pad_and_x_accel_fields_never_reach_the_client() {
    const LOUD: &str = "loud.example.com";
    let probes = [
        Probe::get(LOUD, "/").https(),
        Probe::get(LOUD, "/h2?x=1").h2(),
        Probe::get(LOUD, "/plain"),
    ];
    let certificates = &[(LOUD, "loud-tls")];
    check(case!("response", certificates), &probes, &[(LOUD, Verdict::Identical)]).await;
}

#[tokio::test]
async fn upstream_vhost_changes_the_pods_host_and_keeps_the_forwarded_host() {
    const VHOST: &str = "vhost.example.com";
    let probes = [
        Probe::get(VHOST, "/x"),
        Probe::get(VHOST, "/y?z=1").header("x-forwarded-host", "evil.example.com"),
    ];
    check(case!("upstream_vhost", &[]), &probes, &[(VHOST, Verdict::Identical)]).await;
}
