//! What the pod is sent and what the client gets back: ingress-nginx's forwarding fields, the
//! client's fields nginx drops or replaces, X-Original-URI on the ConfigMap's request, the
//! pod's fields nginx hides, and upstream-vhost.

use super::{
    case::{Verdict, case, check},
    probe::{Payload, Probe},
};

const PLAIN: &str = "plain.example.com";
const GENERATED: &str = "<generated: 32 lowercase hex digits>";

#[tokio::test]
async fn the_pod_sees_the_forwarding_fields_ingress_nginx_sends_and_none_of_the_clients() {
    let bare = Probe::get(PLAIN, "/")
        .expect("pod header host", PLAIN)
        .expect("pod header x-request-id", GENERATED)
        .expect("pod header x-real-ip", "127.0.0.1")
        .expect("pod header x-forwarded-for", "127.0.0.1")
        .expect("pod header x-forwarded-host", PLAIN)
        .expect("pod header x-forwarded-port", "80")
        .expect("pod header x-forwarded-proto", "http")
        .expect("pod header x-forwarded-scheme", "http")
        .expect("pod header x-scheme", "http")
        .expect("pod header x-original-forwarded-for", "<absent>")
        .expect("pod header forwarded", "<absent>")
        .expect("pod header connection", "<absent>");
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
        .header("user-agent", "probe/1.0")
        .expect("pod path_and_query", "/a/b?c=d&e=%2F")
        .expect("pod header x-forwarded-for", "127.0.0.1")
        .expect("pod header x-original-forwarded-for", "203.0.113.7")
        .expect("pod header x-forwarded-host", PLAIN)
        .expect("pod header x-original-forwarded-host", "public.example.com")
        .expect("pod header x-forwarded-proto", "http")
        .expect("pod header x-forwarded-port", "80")
        .expect("pod header x-real-ip", "127.0.0.1")
        .expect("pod header forwarded", "for=203.0.113.9;proto=https")
        .expect("pod header proxy", "<absent>")
        .expect("pod header x_under_score", "<absent>")
        .expect("pod header te", "<absent>")
        .expect("pod header x-multi", "one, two");
    let probes = [
        bare,
        forged,
        Probe::get(PLAIN, "/id")
            .header("x-request-id", "client-chosen-id-123")
            .expect("pod header x-request-id", "client-chosen-id-123"),
        Probe::get("Plain.Example.COM", "/case").expect("pod header x-forwarded-host", "Plain.Example.COM"),
        Probe::post(PLAIN, "/upload", Payload::Sized(5000))
            .header("content-type", "application/octet-stream")
            .header("expect", "100-continue")
            .expect("pod body_len", "5000")
            .expect("pod header expect", "<absent>"),
        Probe::post(PLAIN, "/stream", Payload::Chunked(3000)).expect("pod body_len", "3000"),
        // An upgrade the pod declines: Upgrade passes (nginx.tmpl L1296), Connection comes from
        // the $connection_upgrade map (L380-388) and, being hop-by-hop, is not compared.
        Probe::get(PLAIN, "/ws")
            .header("connection", "upgrade")
            .header("upgrade", "websocket")
            .expect("pod header upgrade", "websocket"),
    ];
    check(case!("headers", &[]), &probes, &[(PLAIN, Verdict::Identical)]).await;
}

#[tokio::test]
async fn x_original_uri_is_sent_when_the_configmap_asks_for_it() {
    let probes = [
        Probe::get(PLAIN, "/orig/path?q=1&r=%20").expect("pod header x-original-uri", "/orig/path?q=1&r=%20"),
        Probe::get(PLAIN, "/")
            .header("x-original-uri", "/forged")
            .expect("pod header x-original-uri", "/"),
    ];
    check(case!("original_uri", &[]), &probes, &[(PLAIN, Verdict::Identical)]).await;
}

#[tokio::test]
async fn the_pods_server_date_x_pad_and_x_accel_fields_never_reach_the_client() {
    const LOUD: &str = "loud.example.com";
    let hidden = |probe: Probe| {
        probe
            .expect("response x-pod", "yes")
            .expect("response x-pad", "<absent>")
            .expect("response x-accel-buffering", "<absent>")
            .expect("response x-accel-expires", "<absent>")
            .expect("response date", "<absent>")
    };
    let probes = [
        hidden(Probe::get(LOUD, "/").https()),
        hidden(Probe::get(LOUD, "/h2?x=1").h2()),
        Probe::get(LOUD, "/plain"),
    ];
    let certificates = &[(LOUD, "loud-tls")];
    check(case!("response", certificates), &probes, &[(LOUD, Verdict::Identical)]).await;
}

#[tokio::test]
async fn upstream_vhost_changes_the_pods_host_and_keeps_the_forwarded_host() {
    const VHOST: &str = "vhost.example.com";
    let probes = [
        Probe::get(VHOST, "/x")
            .expect("pod header host", "internal.shop.svc")
            .expect("pod header x-forwarded-host", VHOST),
        Probe::get(VHOST, "/y?z=1").header("x-forwarded-host", "evil.example.com"),
    ];
    check(case!("upstream_vhost", &[]), &probes, &[(VHOST, Verdict::Identical)]).await;
}
