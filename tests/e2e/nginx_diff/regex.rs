//! Regex locations: use-regex and rewrite-target turn every path of their host into a
//! case-insensitive regex anchored at the start only, tried in ingress-nginx's order; the
//! rewrite keeps the query; PCRE the regex crate cannot run refuses the host.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn rewrite_target_substitutes_captures_and_keeps_the_query() {
    const HOST: &str = "rw.example.com";
    let probes = [
        Probe::get(HOST, "/api")
            .expect("pod", "answered by api")
            .expect("pod path_and_query", "/"),
        Probe::get(HOST, "/api/v1/users?x=1&y=2")
            .expect("pod path_and_query", "/v1/users?x=1&y=2")
            .expect("pod header x-forwarded-prefix", "/api"),
        Probe::get(HOST, "/API/v1").expect("pod path_and_query", "/v1"),
        Probe::get(HOST, "/apix").expect("pod", "answered by web"),
        Probe::get(HOST, "/static/a.css").expect("pod", "answered by solver"),
        Probe::get(HOST, "/staticfoo").expect("pod", "answered by solver"),
        Probe::get(HOST, "/STATIC/x").expect("pod", "answered by solver"),
        Probe::get(HOST, "/x/api/y").expect("pod", "answered by web"),
    ];
    check(case!("rewrite_target", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn use_regex_makes_every_path_of_the_host_a_start_anchored_regex() {
    const HOST: &str = "rx.example.com";
    let probes = [
        Probe::get(HOST, "/users/123").expect("pod", "answered by api"),
        Probe::get(HOST, "/Users/42/orders").expect("pod", "answered by api"),
        Probe::get(HOST, "/users/abc").expect("pod", "answered by web"),
        Probe::get(HOST, "/usersx").expect("pod", "answered by web"),
        Probe::get(HOST, "/exact").expect("pod", "answered by solver"),
        Probe::get(HOST, "/exactly/not").expect("pod", "answered by solver"),
        Probe::get(HOST, "/other").status_only().expect("status", "404"),
    ];
    check(case!("use_regex", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn a_look_ahead_the_regex_crate_cannot_run_refuses_the_host() {
    const HOST: &str = "ahead.example.com";
    let probes = [
        Probe::get(HOST, "/admin").refused_host().expect("status", "404"),
        Probe::get(HOST, "/shop")
            .refused_host()
            .expect("pod", "answered by api"),
    ];
    check(
        case!("regex_lookaround", &[]),
        &probes,
        &[(HOST, Verdict::Refused("UnsupportedPath"))],
    )
    .await;
}
