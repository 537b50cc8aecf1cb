//! cert-manager's HTTP-01 solver Ingress on a host with a certificate: its path answers plain
//! HTTP from the solver pod (no-tls-redirect-locations), every other path still redirects.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn the_http01_solver_answers_plain_http_beside_a_redirecting_host() {
    const HOST: &str = "acme.example.com";
    const SOLVER: &str = "answered by solver";
    let probes = [
        Probe::get(HOST, "/.well-known/acme-challenge/TOKEN123").expect("pod", SOLVER),
        Probe::get(HOST, "/.well-known/acme-challenge/TOKEN123/").expect("pod", SOLVER),
        Probe::get(HOST, "/.well-known/acme-challenge/OTHER")
            .expect_redirect("308", "https://acme.example.com/.well-known/acme-challenge/OTHER"),
        Probe::get(HOST, "/").expect_redirect("308", "https://acme.example.com"),
        Probe::get(HOST, "/.well-known/acme-challenge/TOKEN123")
            .https()
            .expect("pod", SOLVER),
        Probe::get(HOST, "/page").https().expect("pod", "answered by web"),
    ];
    let certificates = &[(HOST, "acme-tls")];
    check(case!("acme", certificates), &probes, &[(HOST, Verdict::Identical)]).await;
}
