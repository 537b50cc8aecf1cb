//! Ingresses ingress-nginx rejects or reads differently from shunt: a snippet annotation (the
//! Ingress rejected whole with ingress-nginx's defaults), and a key shunt's profile does not know.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

const SNIPPET_KEY: &str = "UnsupportedAnnotation: nginx.ingress.kubernetes.io/configuration-snippet";

#[tokio::test]
async fn an_ingress_with_a_snippet_serves_none_of_its_paths() {
    let probes = [
        // ingress-nginx's default backend answers; only its status is compared.
        Probe::get("snippet.example.com", "/").status_only(),
        Probe::get("snippet.example.com", "/x").status_only(),
        // The clean Ingress of the same host still answers, its `/` included under `/s`.
        Probe::get("mixed.example.com", "/"),
        Probe::get("mixed.example.com", "/s"),
        Probe::get("mixed.example.com", "/s/x"),
    ];
    let verdicts = [
        ("snippet.example.com", Verdict::Refused(SNIPPET_KEY)),
        ("mixed.example.com", Verdict::Refused(SNIPPET_KEY)),
    ];
    check(case!("snippet", &[]), &probes, &verdicts).await;
}

#[tokio::test]
async fn an_unknown_nginx_annotation_refuses_the_host_by_name() {
    const HOST: &str = "unknown.example.com";
    let probes = [Probe::get(HOST, "/").status_only()];
    let verdicts = [(
        HOST,
        Verdict::Refused("UnsupportedAnnotation: nginx.ingress.kubernetes.io/made-up-key"),
    )];
    check(case!("unknown_annotation", &[]), &probes, &verdicts).await;
}
