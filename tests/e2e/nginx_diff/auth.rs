//! auth-url: nginx's `auth_request` location as the template writes it, with an auth service
//! that allows (its answer's fields copied onto the request, and what it saw sent on to the
//! pod in `X-Auth-Saw`, so both sides' auth requests are compared), denies with 401 (a
//! challenge, or the sign-in redirect), 403, or answers 500.

use http::{HeaderValue, StatusCode, header};

use super::{
    case::{Verdict, case, check},
    probe::{Payload, Probe},
};
use crate::support::{Backend, text};

/// Fields of the auth request reported to the pod: the template's, two it clears, and those
/// of the `auth_set_headers` case's ConfigMap.
const REPORTED: [&str; 13] = [
    "host",
    "x-original-url",
    "x-original-method",
    "x-sent-from",
    "x-real-ip",
    "x-forwarded-for",
    "x-auth-request-redirect",
    "content-length",
    "x-forwarded-proto",
    "authorization",
    "x-tenant",
    "x-empty",
    "x-quote",
];

/// The auth service of the cases: the `Authorization` field decides.
pub async fn pod() -> Backend {
    Backend::http1("auth")
        .handler(|request| async move {
            let token = request.headers().get(header::AUTHORIZATION).cloned();
            let mut saw = format!(
                "{} {}",
                request.method(),
                request.uri().path_and_query().map_or("", |t| t.as_str())
            );
            for name in REPORTED {
                let value = request.headers().get(name).and_then(|v| v.to_str().ok());
                saw.push_str(&format!("; {name}={}", value.unwrap_or("-")));
            }
            let status = match token.as_ref().and_then(|t| t.to_str().ok()) {
                Some("Bearer good") => StatusCode::OK,
                Some("Bearer forbidden") => StatusCode::FORBIDDEN,
                Some("Bearer broken") => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::UNAUTHORIZED,
            };
            // nginx keeps no answer with a cookie: `X-Auth-No-Cookie` asks for none.
            let cookie = request.headers().get("x-auth-no-cookie").is_none();
            let mut response = text(status, "auth");
            let headers = response.headers_mut();
            if cookie {
                headers.insert(header::SET_COOKIE, HeaderValue::from_static("session=s1"));
            }
            if status == StatusCode::OK {
                headers.insert("x-auth-user", HeaderValue::from_static("alice"));
                headers.insert("x-auth-saw", HeaderValue::from_str(&saw).expect("a field value"));
            } else {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"shop\""),
                );
            }
            response
        })
        .start()
        .await
}

#[tokio::test]
async fn only_the_auth_services_2xx_reaches_the_pod_with_its_fields() {
    const GATED: &str = "gated.example.com";
    const SIGNIN: &str = "signin.example.com";
    let probes = [
        Probe::get(GATED, "/orders?id=7").expect("status", "401"),
        Probe::get(GATED, "/")
            .header("authorization", "Bearer forbidden")
            .expect("status", "403"),
        Probe::get(GATED, "/")
            .header("authorization", "Bearer broken")
            .expect("status", "500"),
        Probe::get(GATED, "/orders?id=7")
            .header("authorization", "Bearer good")
            .header("x-auth-user", "mallory")
            .header("x-forwarded-proto", "gopher")
            .expect("status", "200")
            .expect("pod header x-auth-user", "alice"),
        Probe::get(GATED, "/a").header("authorization", "Bearer good").https(),
        // The auth request carries no body and the subrequest's method (X-Auth-Saw says).
        Probe::post(GATED, "/cart", Payload::Sized(100)).header("authorization", "Bearer good"),
        Probe::post(GATED, "/cart", Payload::Chunked(3000)).header("authorization", "Bearer good"),
        Probe::get(GATED, "/b").header("authorization", "Bearer good").h2(),
        Probe::get(GATED, "/b").h2().expect("status", "401"),
        Probe::get(SIGNIN, "/x?y=1").expect("status", "302"),
        Probe::get(GATED, "/c")
            .header("authorization", "Bearer forbidden")
            .https()
            .expect("status", "403"),
        Probe::get(SIGNIN, "/x")
            .header("authorization", "Bearer forbidden")
            .expect("status", "403"),
        Probe::get(SIGNIN, "/x")
            .header("authorization", "Bearer good")
            .expect("status", "200"),
    ];
    check(
        case!("external_auth", &[(GATED, "gated-tls")]),
        &probes,
        &[(GATED, Verdict::Identical), (SIGNIN, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn the_global_gate_stops_what_it_stops_in_nginx_and_spares_what_it_spares() {
    const GLOBAL: &str = "global.example.com";
    const OWN: &str = "own.example.com";
    const OFF: &str = "off.example.com";
    let good = |probe: Probe| probe.header("authorization", "Bearer good");
    let probes = [
        Probe::get(GLOBAL, "/orders").expect("status", "401"),
        Probe::get(GLOBAL, "/")
            .header("authorization", "Bearer forbidden")
            .expect("status", "403"),
        Probe::get(GLOBAL, "/")
            .header("authorization", "Bearer broken")
            .expect("status", "500"),
        good(Probe::get(GLOBAL, "/orders?id=7"))
            .expect("status", "200")
            .expect("pod header x-auth-user", "alice"),
        good(Probe::get(GLOBAL, "/a")).https(),
        Probe::get(GLOBAL, "/a").https().expect("status", "401"),
        good(Probe::get(GLOBAL, "/b")).h2(),
        Probe::get(GLOBAL, "/b").h2().expect("status", "401"),
        // no-auth-locations: no auth request at all.
        Probe::get(GLOBAL, "/public/x").expect("status", "200"),
        Probe::get(GLOBAL, "/public/x")
            .header("authorization", "Bearer forbidden")
            .expect("status", "200"),
        // The location's own auth-url wins: X-Auth-Saw names its query.
        good(Probe::get(OWN, "/x")).expect("status", "200"),
        Probe::get(OWN, "/x").expect("status", "401"),
        // enable-global-auth "false".
        Probe::get(OFF, "/x").expect("status", "200"),
    ];
    check(
        case!("global_auth", &[(GLOBAL, "global-tls")]),
        &probes,
        &[
            (GLOBAL, Verdict::Identical),
            (OWN, Verdict::Identical),
            (OFF, Verdict::Identical),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_cached_answer_stands_in_for_the_auth_request_within_its_key() {
    const CACHED: &str = "cached.example.com";
    // X-Auth-Saw names the target of the request the auth service saw: a kept answer keeps it.
    let ask = |path: &'static str| {
        Probe::get(CACHED, path)
            .header("authorization", "Bearer good")
            .header("x-auth-no-cookie", "1")
    };
    let probes = [
        ask("/first").expect("status", "200"),
        ask("/second").expect("status", "200"),
        ask("/third").header("x-key", "other").expect("status", "200"),
        ask("/fourth").header("x-key", "other"),
        Probe::get(CACHED, "/denied")
            .header("x-auth-no-cookie", "1")
            .expect("status", "401"),
        Probe::get(CACHED, "/denied")
            .header("x-auth-no-cookie", "1")
            .expect("status", "401"),
        // An answer with a cookie is not kept: this one names its own target.
        Probe::get(CACHED, "/fifth")
            .header("authorization", "Bearer good")
            .header("x-key", "k3"),
        Probe::get(CACHED, "/sixth")
            .header("authorization", "Bearer good")
            .header("x-key", "k3"),
    ];
    check(case!("auth_cache", &[]), &probes, &[(CACHED, Verdict::Identical)]).await;
}

#[tokio::test]
async fn the_configmaps_fields_reach_the_auth_service_and_a_missing_one_refuses() {
    const HEADERS: &str = "headers.example.com";
    const MISSING: &str = "missing.example.com";
    let good = |probe: Probe| probe.header("authorization", "Bearer good");
    let saw = "GET /check?from=case; host=127.0.0.1; x-original-url=http://headers.example.com/a; \
        x-original-method=GET; x-sent-from=nginx-ingress-controller; x-real-ip=127.0.0.1; \
        x-forwarded-for=127.0.0.1; x-auth-request-redirect=/a; content-length=-; \
        x-forwarded-proto=-; authorization=Bearer good; x-tenant=blue; x-empty=-; \
        x-quote=say \"hi\" \\ back";
    let probes = [
        // The caller's fields of the same names are replaced, or removed by the empty value.
        good(Probe::get(HEADERS, "/a"))
            .header("x-tenant", "red")
            .header("x-empty", "mine")
            .expect("status", "200")
            .expect("pod header x-auth-saw", saw),
        good(Probe::get(HEADERS, "/b")).https(),
        good(Probe::get(HEADERS, "/c")).h2(),
        Probe::get(HEADERS, "/d").expect("status", "401"),
        // ingress-nginx denies the location (503); shunt refuses the host instead.
        Probe::get(MISSING, "/").refused_host().expect("status", "503"),
    ];
    let verdicts = [
        (HEADERS, Verdict::Identical),
        (
            MISSING,
            Verdict::Refused("MissingConfigMap: nginx.ingress.kubernetes.io/auth-proxy-set-headers"),
        ),
    ];
    check(
        case!("auth_set_headers", &[(HEADERS, "headers-tls")]),
        &probes,
        &verdicts,
    )
    .await;
}
