//! Custom error pages: a listed status of the pod's (or nginx's own 502 for a pod that is down)
//! answered by the error backend, which sees what failed in X-Code and the other fields; a
//! status not listed, or a pod's answer with interception disabled, passes as it is.

use super::{
    case::{Case, Verdict, case, check},
    probe::{Payload, Probe},
};

const PAGES: &str = "pages.example.com";
const DOWN: &str = "down.example.com";
const QUIET: &str = "quiet.example.com";
const GLOBAL: &str = "global.example.com";
const BROKEN: &str = "broken.example.com";
const EMPTY: &str = "empty.example.com";

#[tokio::test]
async fn a_listed_status_is_the_error_backends_answer_to_a_request_saying_what_failed() {
    let probes = [
        // The pod's 404 and 503 over each protocol: the error backend answers (200).
        Probe::get(PAGES, "/a/b?status=404")
            .header("accept", "text/html")
            .expect("pod", "answered by errors")
            .expect("pod header x-code", "404")
            .expect("pod path_and_query", "/?status=404"),
        Probe::get(PAGES, "/x?status=503")
            .https()
            .header("accept", "application/json")
            .expect("pod header x-code", "503")
            .expect("pod header x-original-uri", "/x?status=503"),
        Probe::get(PAGES, "/y?status=503")
            .h2()
            .expect("pod header x-code", "503"),
        Probe::get(PAGES, "/?status=404")
            .header("x-request-id", "caller-id")
            .header("x-format", "caller's")
            .h2(),
        // The method and the body go again (a named location keeps both).
        Probe::post(PAGES, "/form?status=404", Payload::Sized(3000))
            .https()
            .expect("pod method", "POST"),
        // Not listed: the pod's answer.
        Probe::get(PAGES, "/?status=500")
            .https()
            .expect("pod", "answered by fails"),
        Probe::get(PAGES, "/?status=200")
            .h2()
            .expect("pod", "answered by fails"),
        // A pod that is not listening: nginx's own 502, listed, even without interception.
        Probe::get(DOWN, "/gone")
            .expect("pod header x-code", "502")
            .expect("pod header x-service-port", "http"),
        // Interception off: the pod's listed 404 passes.
        Probe::get(QUIET, "/?status=404").expect("pod", "answered by fails"),
        // No default-backend: the controller's default backend.
        Probe::get(GLOBAL, "/?status=404")
            .expect("pod", "answered by errors")
            .expect("pod header x-ingress-name", "global"),
        // An error backend that cannot be reached: nginx's own 502 page.
        Probe::get(BROKEN, "/?status=404")
            .expect("status", "502")
            .expect("pod", "<no pod answered>"),
        Probe::get(BROKEN, "/?status=201").expect("pod", "answered by fails"),
        // A Service without endpoints: the 503 goes to the error backend too.
        Probe::get(EMPTY, "/none")
            .expect("pod header x-code", "503")
            .expect("pod header x-service-name", "empty"),
    ];
    let verdicts = [
        (PAGES, Verdict::Identical),
        (DOWN, Verdict::Identical),
        (QUIET, Verdict::Identical),
        (GLOBAL, Verdict::Identical),
        (BROKEN, Verdict::Identical),
        (EMPTY, Verdict::Identical),
    ];
    let case = Case {
        args: &["--nginx-default-backend", "shop/errors"],
        ..case!("error_pages", &[(PAGES, "pages-tls")])
    };
    check(case, &probes, &verdicts).await;
}

#[tokio::test]
async fn without_a_default_backend_a_listed_status_is_the_built_in_servers_404() {
    let probes = [
        Probe::get(GLOBAL, "/?status=404")
            .expect("status", "404")
            .expect("pod", "<no pod answered>"),
        Probe::get(GLOBAL, "/?status=503").expect("pod", "answered by fails"),
    ];
    let case = Case {
        name: "error_pages_builtin",
        manifests: include_str!("cases/error_pages.yaml"),
        nginx: include_str!("cases/error_pages_builtin.conf"),
        certificates: &[],
        args: &[],
    };
    check(case, &probes, &[(GLOBAL, Verdict::Identical)]).await;
}
