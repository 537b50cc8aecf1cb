//! A TkeServiceConfig's session persistence end to end: `shunt serve --shadow-class qcloud` in
//! front of three echo pods, the CLB's inserted cookie (`tgw_l7_route`, `Path=/`, expiring with
//! `sessionExpireTime`) kept across requests, and a rule without a session setting none.

use std::collections::BTreeMap;

use http::header;
use serde_json::{Value, json};

use crate::{support::*, tke::node_port};

const HOST: &str = "shop.example.com";
const COOKIE: &str = "tgw_l7_route";

fn mk_session_ingress() -> Ingress {
    mk_ingress("shop", "shop")
        .class("qcloud")
        .annotation("ingress.cloud.tencent.com/tke-service-config", "shop-config")
        .rule(
            HOST,
            [
                mk_path("/", "Prefix", "pods", 80),
                mk_path("/plain", "Prefix", "pods", 80),
            ],
        )
}

/// Session persistence on `shop.example.com/` of the HTTP:80 listener, as Tencent's example
/// config writes it (457/45700); `/plain` keeps the CLB's defaults.
fn mk_config() -> Value {
    json!({
        "apiVersion": "cloud.tencent.com/v1alpha1",
        "kind": "TkeServiceConfig",
        "metadata": {"namespace": "shop", "name": "shop-config"},
        "spec": {"loadBalancer": {"l7Listeners": [{
            "protocol": "HTTP", "port": 80,
            "domains": [{"domain": HOST, "rules": [{
                "url": "/", "forwardType": "HTTP", "scheduler": "WRR",
                "session": {"enable": true, "sessionExpireTime": 1800}
            }]}]
        }]}}
    })
}

fn with_cookie(path: &str, cookie: Option<&str>) -> http::Request<Body> {
    let mut req = get(HOST, path);
    if let Some(value) = cookie {
        let line = format!("other=1; {COOKIE}={value}");
        req.headers_mut().insert(header::COOKIE, line.parse().expect("a value"));
    }
    req
}

/// The session cookie's value the answer sets, checking it is `Path=/` and expires with the
/// session.
fn session_set(reply: &Reply) -> Option<String> {
    let field = reply.headers.get(header::SET_COOKIE)?.to_str().expect("ASCII");
    let (pair, attributes) = field.split_once(';').expect("attributes");
    let expires = attributes.trim().strip_prefix("Expires=").expect("Expires first");
    let (date, rest) = expires.split_once(';').expect("Path after Expires");
    let at = httpdate::parse_http_date(&imf_date(date)).unwrap_or_else(|_| panic!("a cookie date: {date}"));
    let ahead = at.duration_since(std::time::SystemTime::now()).expect("in the future");
    assert!(
        (1700..=1800).contains(&ahead.as_secs()),
        "Expires {date} is not 1800 s ahead"
    );
    // HttpOnly: the CLB's attributes are not documented; the cookie is for the balancer alone.
    assert_eq!(rest.trim(), "Path=/; HttpOnly", "{field}");
    let value = pair.strip_prefix(&format!("{COOKIE}=")).expect("the CLB's cookie");
    assert!(!value.is_empty());
    Some(value.to_string())
}

#[tokio::test]
async fn a_tke_session_keeps_a_client_on_its_pod_with_the_clbs_cookie() {
    let pods = [
        Backend::start("p0").await,
        Backend::start("p1").await,
        Backend::start("p2").await,
    ];
    let service = node_port(mk_backend_service(
        "shop",
        "pods",
        None,
        &pods.iter().collect::<Vec<_>>(),
    ));
    let (_manifests, shunt) = serve(
        &[&service, &mk_session_ingress(), &mk_config()],
        &["--shadow-class", "qcloud"],
    )
    .await;
    let mut seen = BTreeMap::new();
    for _ in 0..12 {
        let first = shunt.send(with_cookie("/", None)).await;
        let cookie = session_set(&first).expect("a new client gets the session cookie");
        let pod = first.backend();
        for _ in 0..8 {
            let again = shunt.send(with_cookie("/cart", Some(&cookie))).await;
            assert_eq!(again.backend(), pod, "cookie {cookie}");
            assert_eq!(
                again.headers.get(header::SET_COOKIE),
                None,
                "a kept session is not set again"
            );
        }
        *seen.entry(pod).or_insert(0) += 1;
    }
    assert!(seen.len() > 1, "twelve new clients all on {seen:?}");
    let plain = shunt.send(with_cookie("/plain", None)).await;
    assert_eq!(plain.headers.get(header::SET_COOKIE), None, "/plain has no session");
}

/// nginx's cookie date (`Thu, 18-Nov-10 11:27:35 GMT`, the year in two digits before 2038) as
/// an IMF date (`Thu, 18 Nov 2010 11:27:35 GMT`).
fn imf_date(cookie_date: &str) -> String {
    let (weekday, rest) = cookie_date.split_once(", ").expect("a weekday");
    let (date, time) = rest.split_once(' ').expect("a time");
    let mut parts = date.split('-');
    let (day, month, year) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let year = if year.len() == 2 {
        format!("20{year}")
    } else {
        year.to_string()
    };
    format!("{weekday}, {day} {month} {year} {time}")
}
