//! The nginx profile's canary and `upstream-hash-by` end to end: `shunt serve --shadow-class
//! nginx` in front of echo backends that name themselves.

use std::collections::BTreeSet;

use http::header;

use crate::support::*;

const NGINX: &str = "nginx.ingress.kubernetes.io/";

fn mk_nginx(name: &str, host: &str, service: &str) -> Ingress {
    mk_ingress("shop", name)
        .class("nginx")
        .rule(host, [mk_path("/", "Prefix", service, 80)])
}

fn with_header(host: &str, name: &str, value: &str) -> http::Request<Body> {
    let mut req = get(host, "/");
    req.headers_mut().insert(
        http::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
        value.parse().expect("a value"),
    );
    req
}

#[tokio::test]
async fn a_canary_by_header_takes_always_and_leaves_never_and_the_rest_to_its_weight() {
    let (web, api) = (Backend::start("web").await, Backend::start("api").await);
    let canary = mk_nginx("web-canary", "c.example.com", "api")
        .annotation(&format!("{NGINX}canary"), "true")
        .annotation(&format!("{NGINX}canary-by-header"), "X-Canary")
        .annotation(&format!("{NGINX}canary-by-cookie"), "beta")
        .annotation(&format!("{NGINX}canary-weight"), "0");
    let (_manifests, shunt) = serve(
        &[
            &mk_backend_service("shop", "web", None, &[&web]),
            &mk_backend_service("shop", "api", None, &[&api]),
            &mk_nginx("web", "c.example.com", "web"),
            &canary,
        ],
        &["--shadow-class", "nginx"],
    )
    .await;
    for _ in 0..10 {
        assert_eq!(shunt.get("c.example.com", "/").await.backend(), "web");
        assert_eq!(
            shunt
                .send(with_header("c.example.com", "x-canary", "always"))
                .await
                .backend(),
            "api"
        );
        assert_eq!(
            shunt
                .send(with_header("c.example.com", "x-canary", "never"))
                .await
                .backend(),
            "web"
        );
    }
    // The header decides before the cookie; another value leaves it to the cookie.
    let mut both = with_header("c.example.com", "x-canary", "never");
    both.headers_mut()
        .insert(header::COOKIE, "beta=always".parse().expect("a value"));
    assert_eq!(shunt.send(both).await.backend(), "web");
    let mut cookie = with_header("c.example.com", "x-canary", "maybe");
    cookie
        .headers_mut()
        .insert(header::COOKIE, "beta=always".parse().expect("a value"));
    assert_eq!(shunt.send(cookie).await.backend(), "api");
}

#[tokio::test]
async fn upstream_hash_by_a_header_keeps_each_key_on_one_pod() {
    let pods = [
        Backend::start("p0").await,
        Backend::start("p1").await,
        Backend::start("p2").await,
    ];
    let hashed =
        mk_nginx("pods", "h.example.com", "pods").annotation(&format!("{NGINX}upstream-hash-by"), "$http_x_user");
    let (_manifests, shunt) = serve(
        &[
            &mk_backend_service("shop", "pods", None, &pods.iter().collect::<Vec<_>>()),
            &hashed,
        ],
        &["--shadow-class", "nginx"],
    )
    .await;
    let mut seen = BTreeSet::new();
    for user in 0..12 {
        let first = shunt
            .send(with_header("h.example.com", "x-user", &format!("u{user}")))
            .await
            .backend();
        for _ in 0..5 {
            let again = shunt
                .send(with_header("h.example.com", "x-user", &format!("u{user}")))
                .await;
            assert_eq!(again.backend(), first, "user u{user}");
        }
        seen.insert(first);
    }
    assert!(seen.len() > 1, "twelve keys all on {seen:?}");
}
