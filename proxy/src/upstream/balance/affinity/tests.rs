//! Cookie affinity against balancer/sticky.lua, sticky_balanced.lua, sticky_persistent.lua and
//! lua-resty-cookie (f418d77, the version ingress-nginx builds).

use std::{net::Ipv4Addr, sync::Arc, time::SystemTime};

use http::{HeaderMap, HeaderValue, header};
use proptest::prelude::*;

use super::{cookie, *};
use crate::{
    metrics::UpstreamStats,
    spec::{SameSite, UpstreamProtocol},
    upstream::Endpoint,
};

fn mk_upstream(lasts: &[u8]) -> Upstream {
    let endpoints = lasts
        .iter()
        .map(|&last| Arc::new(Endpoint::new(([10, 0, 0, last], 8080).into())))
        .collect();
    Upstream::new(
        "ns/web:80",
        UpstreamProtocol::Http1,
        endpoints,
        UpstreamStats::default(),
    )
}

fn mk_affinity(mode: AffinityMode) -> CookieAffinity {
    CookieAffinity {
        mode,
        name: "INGRESSCOOKIE".into(),
        set_cookie: true,
        path: "/".into(),
        domain: None,
        max_age: None,
        expires: None,
        same_site: None,
        conditional_same_site_none: false,
        secure: false,
        change_on_failure: false,
    }
}

fn mk_headers(cookies: &[&str], agent: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for line in cookies {
        headers.append(header::COOKIE, HeaderValue::from_str(line).expect("a field value"));
    }
    if let Some(agent) = agent {
        headers.insert(header::USER_AGENT, HeaderValue::from_str(agent).expect("a field value"));
    }
    headers
}

fn sticky(affinity: &CookieAffinity, headers: &HeaderMap, tls: bool) -> Sticky {
    let vars = RequestVars {
        headers,
        target: "/",
        path: "/",
        host: "a.example.com",
        peer: Ipv4Addr::LOCALHOST.into(),
    };
    Sticky::read(affinity, &vars, tls)
}

/// One request with `cookie` (or none): its endpoint's address and the cookie it set.
fn request(affinity: &CookieAffinity, upstream: &Upstream, cookie: Option<&str>) -> (u8, Option<String>) {
    let line = cookie.map(|value| format!("{}={value}", affinity.name));
    let headers = mk_headers(
        line.as_slice()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        None,
    );
    let mut cookies = Vec::new();
    let index = sticky(affinity, &headers, false)
        .pick(affinity, upstream, &[], &mut cookies)
        .expect("endpoints");
    let set = cookies.first().map(|field| {
        let text = field.to_str().expect("ASCII");
        let pair = text.split(';').next().expect("a pair");
        pair.split_once('=').expect("name=value").1.to_string()
    });
    let std::net::IpAddr::V4(ip) = upstream.endpoints[index].addr.ip() else {
        unreachable!()
    };
    (ip.octets()[3], set)
}

#[test]
fn the_cookie_is_read_as_lua_resty_cookie_reads_it() {
    // get_cookie_table: the last pair of a name wins, names are compared exactly, a value ends
    // at `;`, a space or a tab, and several Cookie lines are one `$http_cookie` joined by `; `.
    let cases: [(&[&str], Option<&str>); 7] = [
        (&["INGRESSCOOKIE=a; INGRESSCOOKIE=b"], Some("b")),
        (&["ingresscookie=a"], None),
        (&["x=1;INGRESSCOOKIE=a b"], Some("a")),
        (&["INGRESSCOOKIE=a=b"], Some("a=b")),
        (&["INGRESSCOOKIE=a", "INGRESSCOOKIE=c"], Some("c")),
        (&["  INGRESSCOOKIE=\tx"], Some("")),
        // A pair without `=` runs into the next name, so that name is not found.
        (&["flag; INGRESSCOOKIE=a"], None),
    ];
    for (lines, want) in cases {
        let headers = mk_headers(lines, None);
        let got = cookie::read(&headers, "INGRESSCOOKIE");
        assert_eq!(got.as_deref(), want.map(str::as_bytes), "{lines:?}");
    }
}

#[test]
fn cookie_times_are_nginx_cookie_time() {
    // lua-nginx-module's documented example, and a year past 2037 written in full.
    assert_eq!(cookie::cookie_time(1_290_079_655), "Thu, 18-Nov-10 11:27:35 GMT");
    assert_eq!(cookie::cookie_time(2_208_988_800), "Sun, 01-Jan-2040 00:00:00 GMT");
    assert_eq!(cookie::cookie_time(951_782_400), "Tue, 29-Feb-00 00:00:00 GMT");
}

#[test]
fn the_set_cookie_field_has_nginx_attributes_in_bake_order() {
    // sticky.lua `set_cookie` and lua-resty-cookie `bake`: Expires, Max-Age, Domain, Path,
    // Secure, HttpOnly, SameSite.
    let mut affinity = mk_affinity(AffinityMode::Balanced);
    affinity.expires = Some(3600);
    affinity.max_age = Some(-1);
    affinity.domain = Some("example.com".into());
    affinity.path = "/app".into();
    affinity.same_site = Some(SameSite::Lax);
    let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_290_079_655);
    let plain = sticky(&affinity, &HeaderMap::new(), false);
    assert_eq!(
        cookie::field(&affinity, &plain, "k", now).expect("a field"),
        "INGRESSCOOKIE=k; Expires=Thu, 18-Nov-10 12:27:35 GMT; Max-Age=-1; Domain=example.com; Path=/app; HttpOnly; SameSite=Lax"
    );
    // `secure` unset: Secure only over TLS (`ngx.var.https == "on"`).
    let tls = sticky(&affinity, &HeaderMap::new(), true);
    let field = cookie::field(&affinity, &tls, "k", now).expect("a field");
    assert!(field.to_str().expect("ASCII").contains("; Path=/app; Secure; HttpOnly"));
}

#[test]
fn conditional_same_site_none_is_left_out_for_browsers_that_reject_it() {
    // util/same_site.lua `same_site_none_compatible`.
    let mut affinity = mk_affinity(AffinityMode::Balanced);
    affinity.same_site = Some(SameSite::None);
    affinity.conditional_same_site_none = true;
    let now = SystemTime::now();
    let with = |affinity: &CookieAffinity, agent: Option<&str>| {
        let sticky = sticky(affinity, &mk_headers(&[], agent), false);
        let field = cookie::field(affinity, &sticky, "k", now).expect("a field");
        field.to_str().expect("ASCII").ends_with("; SameSite=None")
    };
    assert!(with(&affinity, None));
    assert!(with(&affinity, Some("Mozilla/5.0 Chrome/120.0 Safari/537.36")));
    assert!(!with(&affinity, Some("Mozilla/5.0 Chrome/51.0.2704.103 Safari/537.36")));
    assert!(!with(
        &affinity,
        Some("Mozilla/5.0 (iPhone; CPU iPhone OS 12_0 like Mac OS X)")
    ));
    assert!(!with(
        &affinity,
        Some("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) Version/12.1 Safari/605.1.15")
    ));
    // Without the condition, every browser gets it.
    affinity.conditional_same_site_none = false;
    assert!(with(&affinity, Some("Mozilla/5.0 Chrome/51.0 Safari/537.36")));
}

#[test]
fn a_balanced_cookie_of_any_value_names_an_endpoint_and_sets_nothing() {
    // sticky.lua `balance`: chash's `find` answers for every key, so a value this proxy never
    // set (an nginx one included) is kept and no new cookie is set.
    let affinity = mk_affinity(AffinityMode::Balanced);
    let upstream = mk_upstream(&[1, 2, 3]);
    for value in ["1700000000.123.456789|0a1b", "anything", "|x"] {
        let (first, set) = request(&affinity, &upstream, Some(value));
        assert_eq!(set, None, "{value}");
        for _ in 0..20 {
            assert_eq!(request(&affinity, &upstream, Some(value)).0, first, "{value}");
        }
    }
}

#[test]
fn a_persistent_cookie_this_proxy_did_not_set_gets_a_new_endpoint_and_cookie() {
    // sticky_persistent.lua: nodemap's `find` knows only its own keys; `random_except` picks.
    let affinity = mk_affinity(AffinityMode::Persistent);
    let upstream = mk_upstream(&[1, 2, 3]);
    for value in ["stale", "0123456789abcdef", "ffffffffffffffff|x"] {
        let (endpoint, set) = request(&affinity, &upstream, Some(value));
        let set = set.expect("a new cookie");
        assert_eq!(request(&affinity, &upstream, Some(&set)), (endpoint, None), "{value}");
    }
}

#[test]
fn a_failed_try_keeps_the_cookies_endpoint_unless_change_on_failure() {
    // sticky.lua `balance`: `last_failure ~= nil and change_on_failure or upstream == nil`.
    for mode in [AffinityMode::Balanced, AffinityMode::Persistent] {
        let mut affinity = mk_affinity(mode);
        let upstream = mk_upstream(&[1, 2, 3]);
        let (_, set) = request(&affinity, &upstream, None);
        let headers = mk_headers(&[&format!("INGRESSCOOKIE={}", set.expect("a cookie"))], None);
        let sticky = sticky(&affinity, &headers, false);
        let mut cookies = Vec::new();
        let first = sticky.pick(&affinity, &upstream, &[], &mut cookies).expect("endpoints");
        assert_eq!(sticky.pick(&affinity, &upstream, &[first], &mut cookies), Some(first));
        assert!(cookies.is_empty());
        affinity.change_on_failure = true;
        let next = sticky
            .pick(&affinity, &upstream, &[first], &mut cookies)
            .expect("two left");
        assert_ne!(next, first, "{mode:?}");
        assert_eq!(cookies.len(), 1, "the new pick's cookie");
    }
}

#[test]
fn a_route_that_does_not_set_the_cookie_still_reads_it() {
    // sticky.lua `should_set_cookie`: only the locations of the `affinity: cookie` Ingress.
    let mut affinity = mk_affinity(AffinityMode::Persistent);
    affinity.set_cookie = false;
    let upstream = mk_upstream(&[1, 2, 3]);
    assert_eq!(request(&affinity, &upstream, None).1, None);
}

fn mk_lasts() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::btree_set(1u8..=250, 2..8).prop_map(|set| set.into_iter().collect())
}

fn mk_mode() -> impl Strategy<Value = AffinityMode> {
    prop_oneof![Just(AffinityMode::Balanced), Just(AffinityMode::Persistent)]
}

proptest! {
    #[test]
    fn a_client_sending_its_cookie_back_keeps_its_endpoint(mode in mk_mode(), lasts in mk_lasts()) {
        let affinity = mk_affinity(mode);
        let upstream = mk_upstream(&lasts);
        let (endpoint, set) = request(&affinity, &upstream, None);
        let set = set.expect("a first request gets a cookie");
        for _ in 0..30 {
            prop_assert_eq!(request(&affinity, &upstream, Some(&set)), (endpoint, None));
        }
        // A later table with the same pods (another replica, a restart) agrees.
        prop_assert_eq!(request(&affinity, &mk_upstream(&lasts), Some(&set)).0, endpoint);
    }

    #[test]
    fn removing_a_pod_moves_only_its_clients(mode in mk_mode(), lasts in mk_lasts(), gone in any::<prop::sample::Index>()) {
        let affinity = mk_affinity(mode);
        let before = mk_upstream(&lasts);
        let clients: Vec<(u8, String)> = (0..40)
            .map(|_| {
                let (endpoint, set) = request(&affinity, &before, None);
                (endpoint, set.expect("a cookie"))
            })
            .collect();
        let gone = lasts[gone.index(lasts.len())];
        let left: Vec<u8> = lasts.iter().copied().filter(|&last| last != gone).collect();
        let after = mk_upstream(&left);
        for (endpoint, cookie) in &clients {
            let (now, set) = request(&affinity, &after, Some(cookie));
            prop_assert!(left.contains(&now));
            if *endpoint != gone {
                prop_assert_eq!(now, *endpoint);
                prop_assert_eq!(set, None);
            }
        }
    }

    #[test]
    fn adding_a_pod_moves_no_persistent_client(lasts in mk_lasts(), added in 251u8..=254) {
        // sticky_persistent.lua: a token names its endpoint whatever else joins.
        let affinity = mk_affinity(AffinityMode::Persistent);
        let before = mk_upstream(&lasts);
        let mut more = lasts.clone();
        more.push(added);
        let after = mk_upstream(&more);
        for _ in 0..20 {
            let (endpoint, set) = request(&affinity, &before, None);
            prop_assert_eq!(request(&affinity, &after, set.as_deref()), (endpoint, None));
        }
    }

    #[test]
    fn an_unknown_cookie_value_gets_an_endpoint_of_the_backend(mode in mk_mode(), lasts in mk_lasts(), value in "[ -~]{0,40}") {
        let affinity = mk_affinity(mode);
        let upstream = mk_upstream(&lasts);
        let value = value.replace([';', ' ', '\t'], "");
        let (endpoint, set) = request(&affinity, &upstream, Some(&value));
        prop_assert!(lasts.contains(&endpoint));
        if let Some(set) = set {
            prop_assert_eq!(request(&affinity, &upstream, Some(&set)), (endpoint, None));
        }
    }
}
