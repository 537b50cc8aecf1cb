//! CORS as ingress-nginx's template writes it: the allowed origins (exact, one-label wildcard,
//! case-insensitive, anchored at the end only) echoed with the configured fields, and a
//! preflight from one answered 204 without reaching the pod.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

const HOST: &str = "cors.example.com";
const ALLOW_ORIGIN: &str = "response access-control-allow-origin";

#[tokio::test]
async fn cors_echoes_allowed_origins_and_answers_their_preflight() {
    let probes = [
        Probe::get(HOST, "/")
            .header("origin", "https://app.example.com")
            .expect(ALLOW_ORIGIN, "https://app.example.com")
            .expect("response access-control-allow-credentials", "true")
            .expect("response access-control-expose-headers", "X-Total")
            .expect("response access-control-max-age", "600")
            .expect("pod", "answered by web"),
        Probe::get(HOST, "/x")
            .header("origin", "https://shop.example.org")
            .expect(ALLOW_ORIGIN, "https://shop.example.org"),
        Probe::get(HOST, "/x")
            .header("origin", "https://a.b.example.org")
            .expect(ALLOW_ORIGIN, "<absent>"),
        Probe::get(HOST, "/x")
            .header("origin", "https://APP.Example.com")
            .expect(ALLOW_ORIGIN, "https://APP.Example.com"),
        // Anchored at the end only, as buildCorsOriginRegex writes it.
        Probe::get(HOST, "/x")
            .header("origin", "null-https://app.example.com")
            .expect(ALLOW_ORIGIN, "null-https://app.example.com"),
        Probe::get(HOST, "/x")
            .header("origin", "https://other.example.com")
            .expect(ALLOW_ORIGIN, "<absent>"),
        Probe::get(HOST, "/x").expect(ALLOW_ORIGIN, "<absent>"),
        Probe::options(HOST, "/x")
            .header("origin", "https://app.example.com")
            .header("access-control-request-method", "PUT")
            .expect("status", "204")
            .expect("pod", "<no pod answered>")
            .expect(
                "response access-control-allow-methods",
                "GET, PUT, POST, DELETE, PATCH, OPTIONS",
            ),
        // A preflight from an origin not allowed goes to the pod like any request.
        Probe::options(HOST, "/x")
            .header("origin", "https://other.example.com")
            .header("access-control-request-method", "PUT")
            .expect("pod", "answered by web"),
    ];
    check(case!("cors", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}
