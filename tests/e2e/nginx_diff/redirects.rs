//! Answers nginx writes itself from annotations: permanent-redirect (with its code),
//! temporal-redirect winning over it, and app-root.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

const HSTS: &str = "response strict-transport-security";

#[tokio::test]
async fn permanent_and_temporal_redirects_answer_with_the_url_as_written() {
    const MOVED: &str = "moved.example.com";
    const AWAY: &str = "away.example.com";
    const CODED: &str = "coded.example.com";
    const LANDING: &str = "https://new.example.com/landing?from=old";
    let probes = [
        // Before the HTTPS redirect of a host with a certificate.
        Probe::get(MOVED, "/a?b=c").expect_redirect("301", LANDING),
        Probe::get(MOVED, "/a")
            .https()
            .expect_redirect("301", LANDING)
            .expect(HSTS, "max-age=31536000; includeSubDomains"),
        Probe::get(MOVED, "/").h2().expect_redirect("301", LANDING),
        Probe::get(AWAY, "/anything?q=1").expect_redirect("302", "https://temp.example.com/"),
        Probe::get(CODED, "/x/").expect_redirect("308", "https://coded.example.net/x"),
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
        Probe::get(HOST, "/").expect_redirect("302", "http://app.example.com/app"),
        Probe::get(HOST, "/?x=1").expect_redirect("302", "http://app.example.com/app"),
        Probe::get(HOST, "/")
            .https()
            .expect_redirect("302", "https://app.example.com/app")
            .expect(HSTS, "<absent>"),
        Probe::get(HOST, "/")
            .h2()
            .expect_redirect("302", "https://app.example.com/app"),
        Probe::get(HOST, "/app").https().expect("pod path_and_query", "/app"),
        Probe::get(HOST, "/app").expect_redirect("308", "https://app.example.com/app"),
    ];
    let certificates = &[(HOST, "app-tls")];
    check(case!("app_root", certificates), &probes, &[(HOST, Verdict::Identical)]).await;
}
