use proptest::prelude::*;
use std::time::Duration;

use shunt_spec::{CacheKeyPart, CacheValid, Scheme, SigninPart};

use super::*;

fn mk_keys(pairs: &[(&str, &str)]) -> AuthKeys {
    let mut keys = AuthKeys::default();
    for (name, value) in pairs {
        assert!(keys.set(name, value), "{name}");
    }
    keys
}

fn resolved(pairs: &[(&str, &str)]) -> Result<Option<ExternalAuth>, (Refusal, &'static str)> {
    mk_keys(pairs).resolve()
}

#[test]
fn an_auth_url_becomes_the_route_gate_with_nginx_defaults() {
    let auth = resolved(&[(
        "auth-url",
        "http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth",
    )])
    .unwrap()
    .expect("a gate");
    assert_eq!(auth.url.scheme, Scheme::Http);
    assert_eq!(auth.url.host, "oauth2-proxy.auth.svc.cluster.local");
    assert_eq!(auth.url.port, 4180);
    assert_eq!(auth.url.path_and_query, "/oauth2/auth");
    assert_eq!(auth.method, None);
    assert!(auth.response_headers.is_empty() && auth.signin.is_none() && !auth.always_set_cookie);
    assert_eq!(auth.timeouts, AuthTimeouts::default());
}

#[test]
fn without_auth_url_the_other_keys_change_nothing() {
    assert_eq!(
        resolved(&[("auth-signin", "https://x/start"), ("auth-method", "nonsense")]),
        Ok(None)
    );
}

#[test]
fn the_signin_url_gets_rd_unless_its_query_has_it() {
    let parts = |signin: &str| {
        let auth = resolved(&[("auth-url", "https://auth.example/check"), ("auth-signin", signin)]);
        auth.unwrap().unwrap().signin.unwrap().parts
    };
    let rd = [
        SigninPart::Scheme,
        SigninPart::Text("://".into()),
        SigninPart::HttpHost,
        SigninPart::EscapedRequestUri,
    ];
    let mut expected = vec![SigninPart::Text("https://auth.example/start?rd=".into())];
    expected.extend(rd.clone());
    assert_eq!(parts("https://auth.example/start"), expected);
    let mut expected = vec![SigninPart::Text("https://auth.example/start?a=1&rd=".into())];
    expected.extend(rd);
    assert_eq!(parts("https://auth.example/start?a=1"), expected);
    assert_eq!(
        parts("https://$host/oauth2/start?rd=$escaped_request_uri"),
        [
            SigninPart::Text("https://".into()),
            SigninPart::Host,
            SigninPart::Text("/oauth2/start?rd=".into()),
            SigninPart::EscapedRequestUri,
        ]
    );
}

#[test]
fn what_cannot_be_applied_exactly_refuses_with_its_key() {
    let url = ("auth-url", "http://auth.example/check");
    type Case<'a> = (&'a [(&'a str, &'a str)], Refusal, &'a str);
    let cases: [Case<'_>; 11] = [
        (&[("auth-url", "http://$host/check")], Refusal::Unsupported, "auth-url"),
        (&[("auth-url", "http://auth.example")], Refusal::Unsupported, "auth-url"),
        (&[("auth-url", "ftp://auth.example/x")], Refusal::Invalid, "auth-url"),
        (&[("auth-url", "http://auth.example/x\"")], Refusal::Invalid, "auth-url"),
        (
            &[url, ("auth-cache-key", "$remote_user$uri")],
            Refusal::Unsupported,
            "auth-cache-key",
        ),
        (&[url, ("auth-method", "FETCH")], Refusal::Invalid, "auth-method"),
        (
            &[url, ("auth-signin", "https://x/start?next=$uri")],
            Refusal::Unsupported,
            "auth-signin",
        ),
        (
            &[url, ("auth-signin", "/oauth2/start")],
            Refusal::Unsupported,
            "auth-signin",
        ),
        (
            &[url, ("auth-response-headers", "X-User, Host")],
            Refusal::Unsupported,
            "auth-response-headers",
        ),
        (
            &[url, ("auth-response-headers", "X-User;")],
            Refusal::Invalid,
            "auth-response-headers",
        ),
        (
            &[url, ("auth-cache-duration", "200 banana")],
            Refusal::Invalid,
            "auth-cache-duration",
        ),
    ];
    for (pairs, refusal, key) in cases {
        assert_eq!(resolved(pairs), Err((refusal, key)), "{pairs:?}");
    }
}

#[test]
fn companions_are_read_as_the_parser_reads_them() {
    let auth = resolved(&[
        ("auth-url", "https://auth.example:8443/check?x=1"),
        ("auth-method", "POST"),
        ("auth-response-headers", "X-Auth-Request-User, x-auth-request-email,"),
        ("auth-request-redirect", "https://shop.example/"),
        ("auth-always-set-cookie", "true"),
        ("auth-keepalive", "10"),
        ("auth-cache-duration", "200 202 10m"),
    ])
    .unwrap()
    .unwrap();
    assert_eq!((auth.url.port, auth.url.path_and_query.as_str()), (8443, "/check?x=1"));
    assert_eq!(auth.method.as_deref(), Some("POST"));
    assert_eq!(auth.response_headers, ["x-auth-request-user", "x-auth-request-email"]);
    assert_eq!(auth.request_redirect.as_deref(), Some("https://shop.example/"));
    assert!(auth.always_set_cookie);
}

#[test]
fn a_cache_key_becomes_text_and_the_variables_shunt_expands() {
    let auth = resolved(&[
        ("auth-url", "http://auth.example/check"),
        ("auth-cache-key", "u-$remote_user-${http_x_token}$cookie_session$host"),
    ])
    .unwrap()
    .unwrap();
    let cache = auth.cache.expect("a cache");
    assert_eq!(
        cache.key,
        [
            CacheKeyPart::Text("u-".into()),
            CacheKeyPart::RemoteUser,
            CacheKeyPart::Text("-".into()),
            CacheKeyPart::Header("x-token".into()),
            CacheKeyPart::Cookie("session".into()),
            CacheKeyPart::Host,
        ]
    );
    // authreq's DefaultCacheDuration.
    let five = Duration::from_secs(300);
    assert_eq!(
        cache.valid,
        [CacheValid {
            codes: vec![200, 202, 401],
            ttl: five
        }]
    );
}

#[test]
fn cache_durations_become_valid_lines_and_what_nginx_would_not_load_refuses() {
    let lines = cache::valid_lines("200 202 10m, 401 30s, any 1h, 5m").expect("valid");
    let codes: Vec<_> = lines.iter().map(|l| (l.codes.clone(), l.ttl.as_secs())).collect();
    assert_eq!(
        codes,
        [
            (vec![200, 202], 600),
            (vec![401], 30),
            (vec![], 3600),
            (vec![200, 301, 302], 300)
        ]
    );
    assert_eq!(cache::valid_lines("200 1h 30m"), Err(Refusal::Unsupported));
    assert_eq!(cache::valid_lines("200 5ms"), Err(Refusal::Unsupported));
    assert_eq!(cache::valid_lines("banana"), Err(Refusal::Invalid));
}

#[test]
fn no_key_another_method_or_an_empty_key_cache_nothing() {
    let url = ("auth-url", "http://auth.example/check");
    let cache = |pairs: &[(&str, &str)]| resolved(pairs).unwrap().unwrap().cache;
    assert_eq!(cache(&[url]), None);
    assert_eq!(cache(&[url, ("auth-cache-key", " ")]), None);
    assert_eq!(
        cache(&[url, ("auth-cache-key", "$remote_user"), ("auth-method", "POST")]),
        None
    );
    assert!(cache(&[url, ("auth-cache-key", "$remote_user"), ("auth-method", "GET")]).is_some());
    // The global keys have no default duration.
    let mut global = AuthKeys::global();
    global.set("auth-url", "http://auth.example/check");
    global.set("auth-cache-key", "$remote_user");
    assert_eq!(global.resolve(), Err((Refusal::Unsupported, "auth-cache-duration")));
}

#[test]
fn the_cache_scope_is_nginxs_server_name_and_auth_location() {
    assert_eq!(
        cache::scope("a.example.com", "/", "Prefix"),
        "a.example.com/_external-auth-Lw-Prefix"
    );
    assert_eq!(
        cache::scope("", "/public", "Exact"),
        "_/_external-auth-L3B1YmxpYw-Exact"
    );
}

proptest! {
    #[test]
    fn a_cache_key_parses_into_parts_without_a_dollar_or_refuses(value in "[a-z_${}-]{0,40}") {
        if let Ok(parts) = cache::template(&value) {
            prop_assert!(parts.len() <= shunt_spec::MAX_CACHE_KEY_PARTS);
            for part in parts {
                match part {
                    CacheKeyPart::Text(text) => prop_assert!(!text.contains('$') && !text.is_empty()),
                    CacheKeyPart::Header(name) | CacheKeyPart::Cookie(name) => prop_assert!(!name.is_empty()),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn any_auth_url_either_parses_into_its_parts_or_refuses(value in "[ -~]{0,80}") {
        if let Ok(parsed) = url::parse(&value) {
                let scheme = parsed.scheme.as_str();
                let port = if parsed.port == parsed.scheme.default_port() { String::new() } else { format!(":{}", parsed.port) };
                let rebuilt = format!("{scheme}://{}{port}{}", parsed.host, parsed.path_and_query);
                // Only an explicit default port is lost in the round trip.
                let written = value.trim().replacen(&format!(":{}", parsed.scheme.default_port()), "", 1);
                prop_assert!(rebuilt == value.trim() || rebuilt == written, "{value:?} became {rebuilt:?}");
                prop_assert!(parsed.path_and_query.starts_with('/'));
                prop_assert!(!value.contains('$'));
        }
    }

    #[test]
    fn a_signin_template_never_holds_a_variable_it_does_not_know(value in "(https?://|\\$scheme://)[a-z$_./?=&]{0,40}") {
        let auth = resolved(&[("auth-url", "http://auth.example/check"), ("auth-signin", &value)]);
        match auth {
            Ok(Some(auth)) => {
                let parts = auth.signin.expect("a sign-in").parts;
                prop_assert!(!parts.is_empty());
                for part in parts {
                    if let SigninPart::Text(text) = part {
                        prop_assert!(!text.contains('$'), "{text:?}");
                    }
                }
            }
            Ok(None) => prop_assert!(false, "the URL is set"),
            Err((_, key)) => prop_assert_eq!(key, "auth-signin"),
        }
    }

    #[test]
    fn response_field_names_are_lowercase_names_or_a_refusal(value in "[A-Za-z_, -]{0,60}") {
        if let Ok(names) = response_headers(&value) {
            prop_assert!(names.len() <= MAX_RESPONSE_HEADERS);
            for name in names {
                prop_assert!(!name.is_empty() && !TEMPLATE_FIELDS.contains(&name.as_str()));
                prop_assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
            }
        }
    }
}
