//! Path matching as ingress-nginx's locations do it: Prefix element-wise (`/p/` plus `= /p`),
//! a Prefix ending in `/`, Exact, ImplementationSpecific as Prefix, longest first.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn prefix_exact_and_implementation_specific_paths_choose_the_pod_nginx_chooses() {
    const HOST: &str = "paths.example.com";
    let paths = [
        "/",
        "/p",
        "/p/",
        "/p/x",
        "/px",
        "/P",
        "/p/deep",
        "/p/deep/",
        "/p/deep/x",
        "/p/deepx",
        "/q",
        "/q/",
        "/q/x",
        "/e",
        "/e/",
        "/ex",
        "/i",
        "/i/",
        "/i/x",
        "/ix",
        "/p?x=/q/",
    ];
    let probes: Vec<Probe> = paths.iter().map(|path| Probe::get(HOST, path)).collect();
    check(case!("paths", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}
