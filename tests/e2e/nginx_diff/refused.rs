//! Snippets as ingress-nginx's ConfigMap decides (the Ingress rejected whole by default, the
//! snippet dropped, or run), and annotation keys ingress-nginx does not read.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn an_ingress_with_a_snippet_serves_none_of_its_paths() {
    let probes = [
        // ingress-nginx's default backend answers; only its status is compared.
        Probe::get("snippet.example.com", "/").status_only(),
        Probe::get("snippet.example.com", "/x").status_only(),
        // The clean Ingress of the same host still answers, `/s` included.
        Probe::get("mixed.example.com", "/"),
        Probe::get("mixed.example.com", "/s"),
        Probe::get("mixed.example.com", "/s/x"),
    ];
    // shunt serves none of the rejected Ingress either: its own host gets no verdict (it
    // stays on the load balancer), the other host is judged on the clean Ingress alone.
    let verdicts = [
        ("snippet.example.com", Verdict::Absent),
        ("mixed.example.com", Verdict::Identical),
    ];
    check(case!("snippet", &[]), &probes, &verdicts).await;
}

#[tokio::test]
async fn a_snippet_the_configmap_drops_changes_nothing() {
    const HOST: &str = "dropped.example.com";
    let probes = [Probe::get(HOST, "/"), Probe::get(HOST, "/x?y=1")];
    check(case!("snippet_dropped", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn a_snippet_the_configmap_runs_refuses_the_host_by_name() {
    const HOST: &str = "allowed.example.com";
    let probes = [Probe::get(HOST, "/").refused_host().expect("response x-snippet", "1")];
    let verdicts = [(
        HOST,
        Verdict::Refused("UnsupportedAnnotation: nginx.ingress.kubernetes.io/configuration-snippet"),
    )];
    check(case!("snippet_allowed", &[]), &probes, &verdicts).await;
}

#[tokio::test]
async fn an_nginx_annotation_no_parser_reads_changes_nothing_and_refuses_nothing() {
    const HOST: &str = "unknown.example.com";
    let probes = [Probe::get(HOST, "/"), Probe::get(HOST, "/x?y=1")];
    check(case!("unknown_annotation", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}
