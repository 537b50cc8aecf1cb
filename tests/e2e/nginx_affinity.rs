//! The nginx profile's cookie affinity end to end: `shunt serve --shadow-class nginx` in front
//! of three echo pods, a client holding its cookie across requests, the `Set-Cookie` attributes
//! ingress-nginx writes (balancer/sticky.lua), and a pod's removal moving only its clients.

use std::{collections::BTreeMap, time::Duration};

use http::{StatusCode, header};

use crate::support::*;

const NGINX: &str = "nginx.ingress.kubernetes.io/";
const HOST: &str = "s.example.com";
/// An edit must be live within this (the manifest poll interval is 250 ms).
const RELOAD_WITHIN: Duration = Duration::from_secs(5);

fn mk_sticky(mode: &str) -> Ingress {
    mk_ingress("shop", "sticky")
        .class("nginx")
        .rule(HOST, [mk_path("/app", "Prefix", "pods", 80)])
        .annotation(&format!("{NGINX}affinity"), "cookie")
        .annotation(&format!("{NGINX}affinity-mode"), mode)
        .annotation(&format!("{NGINX}session-cookie-name"), "route")
        .annotation(&format!("{NGINX}session-cookie-max-age"), "3600")
        .annotation(&format!("{NGINX}session-cookie-samesite"), "Strict")
}

fn with_cookie(cookie: Option<&str>) -> http::Request<Body> {
    let mut req = get(HOST, "/app/x");
    if let Some(value) = cookie {
        let line = format!("other=1; route={value}");
        req.headers_mut().insert(header::COOKIE, line.parse().expect("a value"));
    }
    req
}

/// The value of the `route` cookie the answer sets, checking its attributes are nginx's.
fn set_route(reply: &Reply) -> Option<String> {
    let field = reply.headers.get(header::SET_COOKIE)?.to_str().expect("ASCII");
    let (pair, attributes) = field.split_once(';').expect("attributes");
    // sticky.lua `set_cookie`: Max-Age, the location's path, HttpOnly, SameSite; no Secure on
    // plain HTTP without session-cookie-secure.
    assert_eq!(attributes, " Max-Age=3600; Path=/app; HttpOnly; SameSite=Strict");
    let value = pair.strip_prefix("route=").expect("the route cookie");
    assert_eq!(value.len(), 16, "{value}");
    Some(value.to_string())
}

async fn start(mode: &str, pods: &[&Backend]) -> (Manifests, Shunt) {
    serve(
        &[&mk_backend_service("shop", "pods", None, pods), &mk_sticky(mode)],
        &["--shadow-class", "nginx"],
    )
    .await
}

#[tokio::test]
async fn a_client_keeps_its_pod_with_its_cookie_and_new_clients_spread() {
    let pods = [
        Backend::start("p0").await,
        Backend::start("p1").await,
        Backend::start("p2").await,
    ];
    let (_manifests, shunt) = start("balanced", &pods.iter().collect::<Vec<_>>()).await;
    let mut seen = BTreeMap::new();
    for _ in 0..12 {
        let first = shunt.send(with_cookie(None)).await;
        let cookie = set_route(&first).expect("a first request gets the cookie");
        let pod = first.backend();
        for _ in 0..10 {
            let again = shunt.send(with_cookie(Some(&cookie))).await;
            assert_eq!(again.backend(), pod, "cookie {cookie}");
            assert_eq!(
                again.headers.get(header::SET_COOKIE),
                None,
                "a kept cookie is not set again"
            );
        }
        *seen.entry(pod).or_insert(0) += 1;
    }
    assert!(seen.len() > 1, "twelve clients all on {seen:?}");
    // Any value hashes onto a pod and is kept, as resty.chash finds one for any key.
    let foreign = shunt.send(with_cookie(Some("1700000000.1.42|abc"))).await;
    assert_eq!(set_route(&foreign), None);
    let pod = foreign.backend();
    assert_eq!(
        shunt.send(with_cookie(Some("1700000000.1.42|abc"))).await.backend(),
        pod
    );
}

#[tokio::test]
async fn removing_a_pod_moves_only_its_clients_and_gives_them_a_new_cookie() {
    let pods = [
        Backend::start("p0").await,
        Backend::start("p1").await,
        Backend::start("p2").await,
    ];
    let (manifests, shunt) = start("persistent", &pods.iter().collect::<Vec<_>>()).await;
    let mut clients = Vec::new();
    for _ in 0..15 {
        let first = shunt.send(with_cookie(None)).await;
        clients.push((set_route(&first).expect("a cookie"), first.backend()));
    }
    let gone = clients[0].1.clone();
    let left: Vec<&Backend> = pods.iter().filter(|pod| pod.name != gone).collect();
    assert_eq!(left.len(), 2, "one of three pods removed");
    manifests.write(
        "routes.yaml",
        &[
            &mk_backend_service("shop", "pods", None, &left),
            &mk_sticky("persistent"),
        ],
    );
    let moved = eventually("the removed pod's client to move", RELOAD_WITHIN, async || {
        let reply = shunt.try_send(with_cookie(Some(&clients[0].0))).await.ok()?;
        (reply.status == StatusCode::OK && reply.backend() != gone).then_some(reply)
    })
    .await;
    let new = set_route(&moved).expect("a moved client gets a new cookie");
    assert_eq!(shunt.send(with_cookie(Some(&new))).await.backend(), moved.backend());
    for (cookie, pod) in &clients {
        let reply = shunt.send(with_cookie(Some(cookie))).await;
        if *pod == gone {
            assert_ne!(reply.backend(), gone);
        } else {
            assert_eq!(&reply.backend(), pod, "a client of a pod that stayed keeps it");
            assert_eq!(reply.headers.get(header::SET_COOKIE), None);
        }
    }
}
