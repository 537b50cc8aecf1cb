use http::{HeaderMap, HeaderValue, StatusCode, header};
use proptest::prelude::*;

use super::{AllowOrigin, Cors, CorsList, CorsSpec, CorsStyle};

fn mk_spec(origins: &[&str]) -> CorsSpec {
    CorsSpec {
        allow_origin: match origins {
            ["*"] => AllowOrigin::Any,
            list => AllowOrigin::List(list.iter().map(|o| o.to_string()).collect()),
        },
        allow_methods: Some(CorsList::Listed("GET, PUT, POST, DELETE, PATCH, OPTIONS".to_string())),
        allow_headers: Some(CorsList::Listed("DNT,Keep-Alive,User-Agent".to_string())),
        allow_credentials: true,
        expose_headers: None,
        max_age: 1728000,
        style: CorsStyle::Nginx,
    }
}

fn mk_cors(origins: &[&str]) -> Cors {
    Cors::from_spec(&mk_spec(origins)).expect("plain values")
}

fn with_origins(origins: &[&str]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for origin in origins {
        headers.append(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
    }
    headers
}

fn allowed(cors: &Cors, origins: &[&str]) -> Option<String> {
    let origin = cors.allowed_origin(&with_origins(origins))?;
    Some(origin.to_str().unwrap().to_string())
}

/// The regex the template writes for `origins` (template.go, `buildCorsOriginRegex` and
/// `buildOriginRegex`), compiled as nginx's `~*` compiles it: caseless, ASCII only.
fn template_regex(origins: &[&str]) -> regex::bytes::Regex {
    let alternatives: Vec<String> = origins
        .iter()
        .map(|origin| format!("({})", regex::escape(origin).replacen(r"\*", r"[A-Za-z0-9\-]+", 1)))
        .collect();
    regex::bytes::Regex::new(&format!("(?i-u)({})$", alternatives.join("|"))).unwrap()
}

#[test]
fn any_origin_allows_every_request_with_a_star_even_without_an_origin() {
    let cors = mk_cors(&["*"]);
    assert_eq!(allowed(&cors, &[]).as_deref(), Some("*"));
    assert_eq!(allowed(&cors, &["https://a.example"]).as_deref(), Some("*"));
}

#[test]
fn a_listed_origin_is_echoed_as_sent_and_others_get_nothing() {
    let cors = mk_cors(&["https://a.example", "http://b.example:8080"]);
    assert_eq!(
        allowed(&cors, &["HTTPS://A.example"]).as_deref(),
        Some("HTTPS://A.example")
    );
    assert_eq!(
        allowed(&cors, &["http://b.example:8080"]).as_deref(),
        Some("http://b.example:8080")
    );
    assert_eq!(allowed(&cors, &["http://b.example"]), None);
    assert_eq!(allowed(&cors, &["https://a.example.evil"]), None);
    assert_eq!(allowed(&cors, &[]), None);
}

#[test]
fn the_match_is_anchored_at_the_end_only_as_the_templates_regex_is() {
    let cors = mk_cors(&["https://a.example"]);
    assert_eq!(
        allowed(&cors, &["https://evil.https://a.example"]).as_deref(),
        Some("https://evil.https://a.example")
    );
}

#[test]
fn a_wildcard_stands_for_exactly_one_label() {
    let cors = mk_cors(&["https://*.example.com"]);
    assert!(allowed(&cors, &["https://api.example.com"]).is_some());
    assert!(allowed(&cors, &["https://a-1.example.com"]).is_some());
    assert_eq!(allowed(&cors, &["https://a.b.example.com"]), None);
    assert_eq!(allowed(&cors, &["https://.example.com"]), None);
    assert_eq!(allowed(&cors, &["https://example.com"]), None);
}

#[test]
fn several_origin_fields_are_matched_and_echoed_joined_like_nginxs_variable() {
    let cors = mk_cors(&["https://a.example"]);
    assert_eq!(
        allowed(&cors, &["https://x.example", "https://a.example"]).as_deref(),
        Some("https://x.example, https://a.example")
    );
    assert_eq!(allowed(&cors, &["https://a.example", "https://x.example"]), None);
}

#[test]
fn the_preflight_is_a_204_with_the_templates_fields_and_no_content_type() {
    let mut spec = mk_spec(&["https://a.example"]);
    spec.expose_headers = Some("X-One, X-Two".to_string());
    let cors = Cors::from_spec(&spec).unwrap();
    let response = cors.preflight(HeaderValue::from_static("https://a.example"), &HeaderMap::new());
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let fields: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_string()))
        .collect();
    let expected = [
        ("access-control-allow-origin", "https://a.example"),
        ("access-control-allow-credentials", "true"),
        ("access-control-allow-methods", "GET, PUT, POST, DELETE, PATCH, OPTIONS"),
        ("access-control-allow-headers", "DNT,Keep-Alive,User-Agent"),
        ("access-control-expose-headers", "X-One, X-Two"),
        ("access-control-max-age", "1728000"),
        ("content-length", "0"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    assert_eq!(fields, expected);
    assert!(http_body::Body::is_end_stream(response.body()));
}

#[test]
fn fields_replace_the_pods_and_leave_the_rest() {
    let mut spec = mk_spec(&["*"]);
    spec.allow_credentials = false;
    spec.max_age = -5;
    let cors = Cors::from_spec(&spec).unwrap();
    let mut headers = HeaderMap::new();
    headers.append(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("https://pod"),
    );
    headers.append(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("https://pod2"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("false"),
    );
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
    cors.set_fields(&mut headers, HeaderValue::from_static("*"));
    let origins: Vec<_> = headers.get_all(header::ACCESS_CONTROL_ALLOW_ORIGIN).iter().collect();
    assert_eq!(origins, ["*"]);
    // Not written by the template when credentials are off, so the pod's stays.
    assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_CREDENTIALS], "false");
    assert_eq!(headers[header::ACCESS_CONTROL_MAX_AGE], "-5");
    assert_eq!(headers[header::CONTENT_TYPE], "text/html");
    assert!(!headers.contains_key(header::ACCESS_CONTROL_EXPOSE_HEADERS));
}

#[test]
fn a_value_that_is_no_field_value_is_an_error() {
    let mut spec = mk_spec(&["*"]);
    spec.allow_headers = Some(CorsList::Listed("X-A\r\nX-B".to_string()));
    assert!(Cors::from_spec(&spec).is_err());
}

/// Origins as main.go admits them (`[a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:\d+)?` or `null`).
fn origin_pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_string()),
        (
            "[a-z]{1,5}",
            any::<bool>(),
            "[A-Za-z0-9.-]{0,8}",
            proptest::option::of(0u16..10000)
        )
            .prop_map(|(scheme, wildcard, host, port)| {
                let star = if wildcard { "*." } else { "" };
                let port = port.map(|p| format!(":{p}")).unwrap_or_default();
                format!("{scheme}://{star}{host}{port}")
            }),
    ]
}

/// An Origin near `pattern`: something before it, its `*` replaced by a label (maybe empty or
/// dotted), letters' case flipped, maybe something after it.
fn near(pattern: &str, before: &str, label: &str, flips: &[bool], after: &str) -> String {
    let filled = pattern.replacen('*', label, 1);
    let flipped: String = filled
        .chars()
        .zip(flips.iter().cycle())
        .map(|(c, flip)| if *flip { c.to_ascii_uppercase() } else { c })
        .collect();
    format!("{before}{flipped}{after}")
}

proptest! {
    #[test]
    fn an_origin_is_allowed_exactly_when_the_templates_regex_matches_it(
        patterns in proptest::collection::vec(origin_pattern(), 1..3),
        pick in any::<prop::sample::Index>(),
        before in prop_oneof![Just(String::new()), "[a-z:/.*-]{1,4}"],
        label in "[A-Za-z0-9.*-]{0,4}",
        flips in proptest::collection::vec(any::<bool>(), 1..8),
        after in prop_oneof![Just(String::new()), Just(String::new()), "[a-z0-9:.-]{1,2}"],
    ) {
        let pattern = &patterns[pick.index(patterns.len())];
        let origin = near(pattern, &before, &label, &flips, &after);
        let list: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let cors = mk_cors(&list);
        let expected = template_regex(&list).is_match(origin.as_bytes());
        prop_assert_eq!(allowed(&cors, &[&origin]).is_some(), expected, "origin {:?} against {:?}", origin, list);
    }
}

// === Fetch style (Gateway API's CORS filter) ===

fn mk_fetch(allow_origin: AllowOrigin, requested: bool, credentials: bool) -> Cors {
    let list = |text: &str| match requested {
        true => CorsList::Requested,
        false => CorsList::Listed(text.to_string()),
    };
    Cors::from_spec(&CorsSpec {
        allow_origin,
        allow_methods: Some(list("GET, OPTIONS")),
        allow_headers: Some(list("x-header-1, x-header-2")),
        allow_credentials: credentials,
        expose_headers: Some("x-header-3".to_string()),
        max_age: 5,
        style: CorsStyle::Fetch,
    })
    .expect("plain values")
}

fn fields_of(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_string()))
        .collect();
    fields.sort();
    fields
}

fn mk_request(fields: &[(&str, &str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in fields {
        headers.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    headers
}

fn preflight_fields(cors: &Cors, request: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
    match cors.on_request(&http::Method::OPTIONS, &mk_request(request))? {
        super::CorsAnswer::Preflight(response) => {
            assert_eq!(response.status(), StatusCode::NO_CONTENT);
            Some(fields_of(response.headers()))
        }
        super::CorsAnswer::Allowed(_) => None,
    }
}

fn owned(fields: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut owned: Vec<(String, String)> = fields.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    owned.sort();
    owned
}

fn foo_origins() -> AllowOrigin {
    AllowOrigin::Origins(vec![crate::spec::OriginPattern::parse("https://www.foo.com").unwrap()])
}

#[test]
fn a_fetch_preflight_gets_every_field_and_no_content_length() {
    let cors = mk_fetch(foo_origins(), false, true);
    let request = [
        ("origin", "https://www.foo.com"),
        ("access-control-request-method", "GET"),
    ];
    let expected = owned(&[
        ("access-control-allow-origin", "https://www.foo.com"),
        ("access-control-allow-credentials", "true"),
        ("access-control-allow-methods", "GET, OPTIONS"),
        ("access-control-allow-headers", "x-header-1, x-header-2"),
        ("access-control-expose-headers", "x-header-3"),
        ("access-control-max-age", "5"),
    ]);
    assert_eq!(preflight_fields(&cors, &request), Some(expected));
}

#[test]
fn a_refused_fetch_preflight_is_answered_without_fields() {
    let cors = mk_fetch(foo_origins(), false, true);
    let request = [
        ("origin", "https://foobar.com"),
        ("access-control-request-method", "GET"),
    ];
    assert_eq!(preflight_fields(&cors, &request), Some(vec![]));
    // An OPTIONS that is no preflight goes on, with the fields when its Origin is allowed.
    let plain = mk_request(&[("origin", "https://www.foo.com")]);
    assert!(matches!(
        cors.on_request(&http::Method::OPTIONS, &plain),
        Some(super::CorsAnswer::Allowed(_))
    ));
    assert!(cors.on_request(&http::Method::OPTIONS, &HeaderMap::new()).is_none());
}

#[test]
fn a_star_echoes_the_requested_method_headers_and_origin_and_omits_what_was_not_asked() {
    let cors = mk_fetch(AllowOrigin::Echo, true, true);
    let request = [
        ("origin", "https://other.foo.com:12345"),
        ("access-control-request-method", "PUT"),
        ("access-control-request-headers", "x-a"),
        ("access-control-request-headers", "x-b"),
    ];
    let expected = owned(&[
        ("access-control-allow-origin", "https://other.foo.com:12345"),
        ("access-control-allow-credentials", "true"),
        ("access-control-allow-methods", "PUT"),
        ("access-control-allow-headers", "x-a, x-b"),
        ("access-control-expose-headers", "x-header-3"),
        ("access-control-max-age", "5"),
    ]);
    assert_eq!(preflight_fields(&cors, &request), Some(expected));
    let bare = [
        ("origin", "https://x.example"),
        ("access-control-request-method", "PUT"),
    ];
    let fields = preflight_fields(&cors, &bare).unwrap();
    assert!(!fields.iter().any(|(name, _)| name == "access-control-allow-headers"));
    // Without an Origin, nothing: the request is no CORS request.
    assert!(cors.on_request(&http::Method::GET, &HeaderMap::new()).is_none());
}

#[test]
fn other_fetch_answers_get_only_origin_credentials_and_expose() {
    let cors = mk_fetch(foo_origins(), false, false);
    let Some(super::CorsAnswer::Allowed(origin)) =
        cors.on_request(&http::Method::GET, &mk_request(&[("origin", "https://www.foo.com")]))
    else {
        panic!("the Origin is allowed");
    };
    let mut headers = HeaderMap::new();
    cors.set_fields(&mut headers, origin);
    let expected = owned(&[
        ("access-control-allow-origin", "https://www.foo.com"),
        ("access-control-expose-headers", "x-header-3"),
    ]);
    assert_eq!(fields_of(&headers), expected);
    let refused = mk_request(&[("origin", "https://foobar.com")]);
    assert!(cors.on_request(&http::Method::GET, &refused).is_none());
}
