//! The TLS side of the nginx profile: ssl-redirect (on by default for a host with a
//! certificate, the Location without one trailing `/`), force-ssl-redirect, ssl-redirect
//! "false" on an Ingress and in the ConfigMap, the ConfigMap's http-redirect-code with
//! preserve-trailing-slash, and HSTS on HTTPS answers with the ConfigMap's keys.

use super::{
    case::{Verdict, case, check},
    probe::{Payload, Probe},
};

#[tokio::test]
async fn a_host_with_a_certificate_redirects_plain_http_without_one_trailing_slash() {
    const HOST: &str = "secure.example.com";
    let probes = [
        Probe::get(HOST, "/"),
        Probe::get(HOST, "/a/?x=/"),
        Probe::get(HOST, "/a/b?c=d"),
        Probe::get(HOST, "/dir//"),
        Probe::get(HOST, "/.well-known/acme-challenge/not-a-solver"),
        Probe::post(HOST, "/form", Payload::Sized(10)),
        Probe::get(HOST, "/a").https(),
        Probe::get(HOST, "/dir/")
            .https()
            .header("x-forwarded-for", "198.51.100.1"),
        Probe::get(HOST, "/b?c=d").h2(),
        Probe::post(HOST, "/up", Payload::Chunked(2500)).h2(),
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
    let probes = [Probe::get(HOST, "/"), Probe::get(HOST, "/x/?y=1")];
    check(case!("force_ssl_redirect", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn ssl_redirect_false_serves_plain_http_on_a_host_with_a_certificate() {
    const HOST: &str = "optout.example.com";
    let probes = [Probe::get(HOST, "/"), Probe::get(HOST, "/s/").https()];
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
    let probes = [Probe::get(HOST, "/a/"), Probe::get(HOST, "/a/").h2()];
    let certificates = &[(HOST, "cmoff-tls")];
    let verdicts = [(HOST, Verdict::Identical)];
    check(case!("configmap_no_redirect", certificates), &probes, &verdicts).await;
}

#[tokio::test]
async fn the_configmaps_redirect_code_and_preserve_trailing_slash_shape_the_redirect() {
    const KEEP: &str = "keep.example.com";
    const TRIM: &str = "trim.example.com";
    let probes = [
        Probe::get(KEEP, "/a/"),
        Probe::get(KEEP, "/"),
        Probe::get(TRIM, "/a/"),
        Probe::get(TRIM, "/a/?q=/"),
    ];
    let certificates = &[(KEEP, "keep-tls"), (TRIM, "trim-tls")];
    let verdicts = [(KEEP, Verdict::Identical), (TRIM, Verdict::Identical)];
    check(case!("redirect_code", certificates), &probes, &verdicts).await;
}

#[tokio::test]
async fn hsts_follows_the_configmaps_max_age_subdomains_and_preload() {
    const HOST: &str = "hsts.example.com";
    let probes = [
        Probe::get(HOST, "/").https(),
        Probe::get(HOST, "/x").h2(),
        Probe::get(HOST, "/y"),
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
    let probes = [Probe::get(HOST, "/").https(), Probe::get(HOST, "/y")];
    let certificates = &[(HOST, "nohsts-tls")];
    check(case!("hsts_off", certificates), &probes, &[(HOST, Verdict::Identical)]).await;
}
