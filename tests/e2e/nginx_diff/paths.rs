//! Path matching as ingress-nginx's locations do it: Prefix element-wise (`/p/` plus `= /p`),
//! a Prefix ending in `/`, Exact, ImplementationSpecific as Prefix, longest first.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn prefix_exact_and_implementation_specific_paths_choose_the_pod_nginx_chooses() {
    const HOST: &str = "paths.example.com";
    // (path, the pod ingress-nginx's locations choose).
    let chosen = [
        ("/", "web"),
        ("/p", "api"),
        ("/p/", "api"),
        ("/p/x", "api"),
        ("/px", "web"),
        ("/P", "web"),
        ("/p/deep", "solver"),
        ("/p/deep/", "solver"),
        ("/p/deep/x", "solver"),
        ("/p/deepx", "api"),
        ("/q/", "api"),
        ("/q/x", "api"),
        ("/e", "api"),
        ("/e/", "web"),
        ("/ex", "web"),
        ("/i", "solver"),
        ("/i/", "solver"),
        ("/i/x", "solver"),
        ("/ix", "web"),
        ("/p?x=/q/", "api"),
    ];
    let mut probes: Vec<Probe> = chosen
        .iter()
        .map(|(path, pod)| Probe::get(HOST, path).expect("pod", answered_by(pod)))
        .collect();
    // A prefix location ending in `/` with proxy_pass answers its path without the slash with
    // a 301 to it (nginx's core module, `auto_redirect`), before `/` could.
    probes.push(Probe::get(HOST, "/q").expect_redirect("301", "http://paths.example.com/q/"));
    // A host no Ingress names: the catch-all server (nginx.tmpl L669-680, the default backend).
    probes.push(
        Probe::get("nowhere.example.com", "/p")
            .status_only()
            .expect("status", "404"),
    );
    check(case!("paths", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

fn answered_by(pod: &str) -> &'static str {
    match pod {
        "web" => "answered by web",
        "api" => "answered by api",
        _ => "answered by solver",
    }
}
