//! Answers nginx writes itself from annotations: permanent-redirect (with its code),
//! temporal-redirect winning over it, and app-root.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn permanent_and_temporal_redirects_answer_with_the_url_as_written() {
    const MOVED: &str = "moved.example.com";
    const AWAY: &str = "away.example.com";
    const CODED: &str = "coded.example.com";
    let probes = [
        // Before the HTTPS redirect of a host with a certificate.
        Probe::get(MOVED, "/a?b=c"),
        Probe::get(MOVED, "/a").https(),
        Probe::get(MOVED, "/").h2(),
        Probe::get(AWAY, "/anything?q=1"),
        Probe::get(CODED, "/x/"),
    ];
    let certificates = &[(MOVED, "moved-tls")];
    let verdicts = [
        (MOVED, Verdict::Identical),
        (AWAY, Verdict::Identical),
        (CODED, Verdict::Identical),
    ];
    check(case!("fixed_redirects", certificates), &probes, &verdicts).await;
}

#[tokio::test]
async fn app_root_redirects_the_root_before_the_https_redirect_and_without_hsts() {
    const HOST: &str = "app.example.com";
    let probes = [
        Probe::get(HOST, "/"),
        Probe::get(HOST, "/?x=1"),
        Probe::get(HOST, "/").https(),
        Probe::get(HOST, "/").h2(),
        Probe::get(HOST, "/app").https(),
        Probe::get(HOST, "/app"),
    ];
    let certificates = &[(HOST, "app-tls")];
    check(case!("app_root", certificates), &probes, &[(HOST, Verdict::Identical)]).await;
}
