//! The TLS side of the nginx profile: ssl-redirect (on by default for a host with a
//! certificate, the Location without one trailing `/`), force-ssl-redirect, ssl-redirect
//! "false" on an Ingress and in the ConfigMap, the ConfigMap's http-redirect-code with
//! preserve-trailing-slash, HSTS on HTTPS answers with the ConfigMap's keys, and TLS to the pod
//! (backend-protocol HTTPS and AUTO_HTTP), and the 503 of an Ingress proxy-ssl-secret denies.

use super::{
    case::{Verdict, case, check},
    probe::{Payload, Probe},
};

const HSTS: &str = "response strict-transport-security";
const DEFAULT_HSTS: &str = "max-age=31536000; includeSubDomains";

#[tokio::test]
async fn a_host_with_a_certificate_redirects_plain_http_without_one_trailing_slash() {
    const HOST: &str = "secure.example.com";
    let probes = [
        Probe::get(HOST, "/").expect_redirect("308", "https://secure.example.com"),
        Probe::get(HOST, "/a/?x=/").expect_redirect("308", "https://secure.example.com/a/?x="),
        Probe::get(HOST, "/a/b?c=d").expect_redirect("308", "https://secure.example.com/a/b?c=d"),
        Probe::get(HOST, "/dir//").expect_redirect("308", "https://secure.example.com/dir/"),
        Probe::get(HOST, "/.well-known/acme-challenge/not-a-solver").expect("status", "308"),
        Probe::post(HOST, "/form", Payload::Sized(10)).expect("status", "308"),
        Probe::get(HOST, "/a").https().expect(HSTS, DEFAULT_HSTS),
        Probe::get(HOST, "/dir/")
            .https()
            .header("x-forwarded-for", "198.51.100.1")
            .expect("pod header x-forwarded-port", "443")
            .expect("pod header x-forwarded-proto", "https")
            .expect("pod header x-original-forwarded-for", "198.51.100.1"),
        Probe::get(HOST, "/b?c=d")
            .h2()
            .expect(HSTS, DEFAULT_HSTS)
            .expect("pod header host", HOST)
            .expect("pod header x-scheme", "https"),
        Probe::post(HOST, "/up", Payload::Chunked(2500))
            .h2()
            .expect("pod body_len", "2500"),
    ];
    let certificates = &[(HOST, "secure-tls")];
    check(
        case!("ssl_redirect", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn force_ssl_redirect_redirects_a_host_without_a_certificate() {
    const HOST: &str = "force.example.com";
    let probes = [
        Probe::get(HOST, "/").expect_redirect("308", "https://force.example.com"),
        Probe::get(HOST, "/x/?y=1").expect_redirect("308", "https://force.example.com/x/?y=1"),
    ];
    check(case!("force_ssl_redirect", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn ssl_redirect_false_serves_plain_http_on_a_host_with_a_certificate() {
    const HOST: &str = "optout.example.com";
    let probes = [
        Probe::get(HOST, "/").expect("status", "200").expect(HSTS, "<absent>"),
        Probe::get(HOST, "/s/").https().expect(HSTS, DEFAULT_HSTS),
    ];
    let certificates = &[(HOST, "optout-tls")];
    check(
        case!("ssl_redirect_off", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn the_configmaps_ssl_redirect_false_serves_plain_http() {
    const HOST: &str = "cmoff.example.com";
    let probes = [
        Probe::get(HOST, "/a/").expect("status", "200"),
        Probe::get(HOST, "/a/").h2().expect(HSTS, DEFAULT_HSTS),
    ];
    let certificates = &[(HOST, "cmoff-tls")];
    let verdicts = [(HOST, Verdict::Identical)];
    check(case!("configmap_no_redirect", certificates), &probes, &verdicts).await;
}

#[tokio::test]
async fn the_configmaps_redirect_code_and_preserve_trailing_slash_shape_the_redirect() {
    const KEEP: &str = "keep.example.com";
    const TRIM: &str = "trim.example.com";
    let probes = [
        Probe::get(KEEP, "/a/").expect_redirect("301", "https://keep.example.com/a/"),
        Probe::get(KEEP, "/").expect_redirect("301", "https://keep.example.com/"),
        Probe::get(TRIM, "/a/").expect_redirect("301", "https://trim.example.com/a"),
        Probe::get(TRIM, "/a/?q=/").expect_redirect("301", "https://trim.example.com/a/?q="),
    ];
    let certificates = &[(KEEP, "keep-tls"), (TRIM, "trim-tls")];
    let verdicts = [(KEEP, Verdict::Identical), (TRIM, Verdict::Identical)];
    check(case!("redirect_code", certificates), &probes, &verdicts).await;
}

#[tokio::test]
async fn hsts_follows_the_configmaps_max_age_subdomains_and_preload() {
    const HOST: &str = "hsts.example.com";
    let probes = [
        Probe::get(HOST, "/").https().expect(HSTS, "max-age=600; preload"),
        Probe::get(HOST, "/x").h2().expect(HSTS, "max-age=600; preload"),
        Probe::get(HOST, "/y").expect(HSTS, "<absent>"),
    ];
    let certificates = &[(HOST, "hsts-tls")];
    check(
        case!("hsts_configmap", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn the_configmaps_hsts_false_sends_no_strict_transport_security() {
    const HOST: &str = "nohsts.example.com";
    let probes = [
        Probe::get(HOST, "/").https().expect(HSTS, "<absent>"),
        Probe::get(HOST, "/y").expect("status", "308"),
    ];
    let certificates = &[(HOST, "nohsts-tls")];
    check(case!("hsts_off", certificates), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn backend_protocol_https_reaches_a_pod_whose_certificate_neither_side_checks() {
    const HOST: &str = "pod-tls.example.com";
    let probes = [
        Probe::get(HOST, "/").expect("pod", "answered by secure"),
        Probe::get(HOST, "/a/b?c=d").expect("pod", "answered by secure"),
        Probe::post(HOST, "/form", Payload::Sized(10)).expect("pod body_len", "10"),
    ];
    check(case!("https_backend", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn an_https_pod_is_verified_against_the_secrets_ca_and_the_proxy_ssl_name() {
    // The refused ones first: nginx keeps idle upstream connections per pod, not per location,
    // so once a verified one is idle every location reuses it whatever its own proxy_ssl_*
    // lines say (shunt keeps them per setting).
    let probes = [
        Probe::get("wrong-ca.example.com", "/").expect("status", "502"),
        Probe::get("wrong-name.example.com", "/").expect("status", "502"),
        Probe::get("right-ca.example.com", "/a?b=c").expect("pod", "answered by secure"),
    ];
    let verdicts = [
        ("right-ca.example.com", Verdict::Identical),
        ("wrong-ca.example.com", Verdict::Identical),
        ("wrong-name.example.com", Verdict::Identical),
    ];
    check(case!("https_verified", &[]), &probes, &verdicts).await;
}

#[tokio::test]
async fn auto_http_speaks_to_the_pod_in_the_callers_scheme() {
    const PLAIN: &str = "auto-plain.example.com";
    const TLS: &str = "auto-tls.example.com";
    let probes = [
        Probe::get(PLAIN, "/a?b=c")
            .expect("pod", "answered by web")
            .expect("pod header x-forwarded-proto", "http"),
        // The cleartext pod fails a TLS handshake.
        Probe::get(PLAIN, "/").https().expect("status", "502"),
        Probe::get(TLS, "/a?b=c")
            .https()
            .expect("pod", "answered by secure")
            .expect("pod header x-forwarded-proto", "https"),
        Probe::post(TLS, "/form", Payload::Sized(10))
            .h2()
            .expect("pod body_len", "10"),
    ];
    let certificates = &[(PLAIN, "auto-plain-tls"), (TLS, "auto-tls-tls")];
    let verdicts = [(PLAIN, Verdict::Identical), (TLS, Verdict::Identical)];
    check(case!("auto_http", certificates), &probes, &verdicts).await;
}

#[tokio::test]
async fn a_missing_proxy_ssl_secret_answers_503_on_every_location_of_the_ingress() {
    const HOST: &str = "denied.example.com";
    let probes = [
        // No HTTPS redirect: the location's `return` comes first.
        Probe::get(HOST, "/").expect("status", "503").expect(HSTS, "<absent>"),
        Probe::get(HOST, "/a")
            .https()
            .expect("status", "503")
            .expect(HSTS, DEFAULT_HSTS),
        Probe::get(HOST, "/web/x").h2().expect("status", "503"),
        // nginx's own 1m, not the Ingress's proxy-body-size.
        Probe::post(HOST, "/web", Payload::Sized(2 << 20)).expect("status", "413"),
    ];
    let certificates = &[(HOST, "denied-tls")];
    check(
        case!("proxy_ssl_denied", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}
