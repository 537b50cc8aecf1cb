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

#[tokio::test]
async fn a_rewrite_target_that_is_a_url_answers_302_with_the_groups_and_the_query() {
    const HOST: &str = "rwurl.example.com";
    // Plain HTTP too: the rewrite's redirect comes before the HTTPS one.
    let probes = [
        Probe::get(HOST, "/docs/a/b?x=1").expect_redirect("302", "https://docs.example.com/a/b?x=1"),
        Probe::get(HOST, "/DOCS").expect_redirect("302", "https://docs.example.com/"),
        Probe::get(HOST, "/docs/p")
            .https()
            .expect_redirect("302", "https://docs.example.com/p")
            .expect(HSTS, "max-age=31536000; includeSubDomains"),
        Probe::get(HOST, "/docs/")
            .h2()
            .expect_redirect("302", "https://docs.example.com/"),
    ];
    let certificates = &[(HOST, "rwurl-tls")];
    check(
        case!("rewrite_url", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn from_to_www_redirects_both_ways_and_an_alias_serves_its_hosts_locations() {
    const SHOP: &str = "shop.example.com";
    const WWW_SHOP: &str = "www.shop.example.com";
    const BLOG: &str = "blog.example.com";
    const WWW_NEWS: &str = "www.news.example.com";
    const NEWS: &str = "news.example.com";
    const ALIAS: &str = "alias.example.com";
    let probes = [
        Probe::get(WWW_SHOP, "/cart/?id=1").expect_redirect("308", "http://shop.example.com:80/cart/?id=1"),
        Probe::get(WWW_SHOP, "/cart/").expect_redirect("308", "http://shop.example.com:80/cart"),
        Probe::get(WWW_SHOP, "/").expect_redirect("308", "http://shop.example.com:80"),
        Probe::get(BLOG, "/post").expect_redirect("308", "http://www.blog.example.com:80/post"),
        Probe::get(SHOP, "/").expect("pod", "answered by web"),
        // The other name of www.news.example.com is an Ingress host: no redirect there.
        Probe::get(NEWS, "/").expect("pod", "answered by loud"),
        Probe::get(ALIAS, "/x?y=1").expect("pod", "answered by solver"),
        Probe::get(WWW_NEWS, "/x").expect("pod", "answered by solver"),
    ];
    let verdicts = [
        (WWW_SHOP, Verdict::Identical),
        (BLOG, Verdict::Identical),
        (ALIAS, Verdict::Identical),
        (NEWS, Verdict::Identical),
    ];
    check(case!("server_names", &[]), &probes, &verdicts).await;
}
