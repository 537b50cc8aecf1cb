//! `enable-cors` and `cors-*`: main.go's defaults and parsing into the routes' CORS, and the
//! values its validators reject refusing the hosts.

use shunt_spec::{AllowOrigin, CorsList, CorsSpec, CorsStyle};

use super::*;

const ENABLE: &str = "nginx.ingress.kubernetes.io/enable-cors: \"true\"";

/// The CORS of every route `annotations` give `a.example.com`'s paths `/` and `/api`, which
/// must agree, and the host's refusals.
fn cors_of(annotations: &str) -> (Option<CorsSpec>, Vec<String>) {
    let rule = mk_rule("a.example.com", &[("/", "Prefix"), ("/api", "Exact")]);
    let compiled = compile_nginx(&[mk_ingress("a", annotations, &rule)]);
    let host = compiled
        .table
        .hosts
        .iter()
        .find(|h| h.host.to_string() == "a.example.com");
    let routes: Vec<_> = host
        .map(|h| h.paths.iter().map(|p| p.options.cors.clone()).collect())
        .unwrap_or_default();
    assert!(routes.windows(2).all(|pair| pair[0] == pair[1]), "{routes:?}");
    (
        routes.into_iter().next().flatten(),
        refusals(&compiled, "a.example.com"),
    )
}

fn with_enable(keys: &str) -> String {
    format!("{ENABLE}\n{keys}")
}

fn defaults(allow_origin: AllowOrigin) -> CorsSpec {
    CorsSpec {
        allow_origin,
        allow_methods: Some(CorsList::Listed("GET, PUT, POST, DELETE, PATCH, OPTIONS".to_string())),
        allow_headers: Some(CorsList::Listed(
            "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"
                .to_string(),
        )),
        allow_credentials: true,
        expose_headers: None,
        max_age: 1728000,
        style: CorsStyle::Nginx,
    }
}

fn list(origins: &[&str]) -> AllowOrigin {
    AllowOrigin::List(origins.iter().map(|o| o.to_string()).collect())
}

#[test]
fn enable_cors_alone_gives_every_route_main_gos_defaults_and_the_host_stays_identical() {
    let (cors, refused) = cors_of(ENABLE);
    assert_eq!(cors, Some(defaults(AllowOrigin::Any)));
    assert_eq!(refused, Vec::<String>::new());
}

#[test]
fn without_enable_cors_the_other_keys_change_nothing_and_refuse_nothing() {
    for enable in [
        "",
        "nginx.ingress.kubernetes.io/enable-cors: \"false\"\n",
        "nginx.ingress.kubernetes.io/enable-cors: \"\"\n",
    ] {
        let keys = format!(
            "{enable}nginx.ingress.kubernetes.io/cors-allow-origin: \"$bad\"\nnginx.ingress.kubernetes.io/cors-max-age: x"
        );
        assert_eq!(cors_of(&keys), (None, vec![]), "{enable}");
    }
}

#[test]
fn every_key_is_read_as_written_after_trimming() {
    let keys = with_enable(
        "nginx.ingress.kubernetes.io/cors-allow-origin: \" https://a.example, http://*.b.example:8080 ,null\"
nginx.ingress.kubernetes.io/cors-allow-methods: \" PUT, get \"
nginx.ingress.kubernetes.io/cors-allow-headers: \"X-Forwarded-For, X-app123-XPTO\"
nginx.ingress.kubernetes.io/cors-allow-credentials: \"false\"
nginx.ingress.kubernetes.io/cors-expose-headers: \"*, X-CustomResponseHeader\"
nginx.ingress.kubernetes.io/cors-max-age: \"-1\"",
    );
    let expected = CorsSpec {
        allow_origin: list(&["https://a.example", "http://*.b.example:8080", "null"]),
        allow_methods: Some(CorsList::Listed("PUT, get".to_string())),
        allow_headers: Some(CorsList::Listed("X-Forwarded-For, X-app123-XPTO".to_string())),
        allow_credentials: false,
        expose_headers: Some("*, X-CustomResponseHeader".to_string()),
        max_age: -1,
        style: CorsStyle::Nginx,
    };
    assert_eq!(cors_of(&keys), (Some(expected), vec![]));
}

#[test]
fn a_star_admits_all_and_a_blank_list_is_a_star() {
    for origins in ["*", " * ", " "] {
        let keys = with_enable(&format!("nginx.ingress.kubernetes.io/cors-allow-origin: \"{origins}\""));
        assert_eq!(cors_of(&keys), (Some(defaults(AllowOrigin::Any)), vec![]), "{origins}");
    }
}

#[test]
fn origins_main_go_skips_are_skipped_and_none_left_means_no_cors() {
    // Admitted by the validator, whose items need no comma between them, not by Parse's own
    // check: no scheme, a wildcard inside, two ports.
    let keys = with_enable(
        "nginx.ingress.kubernetes.io/cors-allow-origin: \"a.example, https://b.example, https://a.*.example, http://c:1:2\"",
    );
    assert_eq!(cors_of(&keys), (Some(defaults(list(&["https://b.example"]))), vec![]));
    let keys = with_enable("nginx.ingress.kubernetes.io/cors-allow-origin: \"a.example\"");
    assert_eq!(cors_of(&keys), (None, vec![]));
}

#[test]
fn list_values_parse_rejects_fall_back_to_the_defaults() {
    // Two blanks after a comma pass the validator (spaces removed) but not Parse's regex.
    let keys = with_enable(
        "nginx.ingress.kubernetes.io/cors-allow-methods: \"GET,  POST\"
nginx.ingress.kubernetes.io/cors-expose-headers: \"X-A,  X-B\"",
    );
    assert_eq!(cors_of(&keys), (Some(defaults(AllowOrigin::Any)), vec![]));
}

#[test]
fn values_the_validators_reject_refuse_the_host_naming_the_key() {
    let cases = [
        ("enable-cors", "yes"),
        ("cors-allow-origin", "https://$host"),
        ("cors-allow-origin", "https://a.example/path"),
        ("cors-allow-origin", "HTTPS://a.example"),
        // `*` is the whole value or nothing.
        ("cors-allow-origin", "https://a.example, *"),
        ("cors-allow-origin", "'https://a.example'"),
        ("cors-allow-methods", "GET;POST"),
        ("cors-allow-methods", "$request_method"),
        ("cors-allow-headers", "X-A: 1"),
        ("cors-allow-credentials", "yes"),
        ("cors-expose-headers", "X-$a"),
        ("cors-max-age", "1.5"),
        ("cors-max-age", " 5"),
    ];
    for (key, value) in cases {
        let enable = if key == "enable-cors" {
            String::new()
        } else {
            format!("{ENABLE}\n")
        };
        let keys = format!("{enable}nginx.ingress.kubernetes.io/{key}: {value:?}");
        let (_, refused) = cors_of(&keys);
        assert_eq!(
            refused,
            vec![format!("InvalidAnnotation: nginx.ingress.kubernetes.io/{key}")],
            "{key}: {value}"
        );
    }
}

#[test]
fn a_cors_key_nginx_does_not_read_changes_nothing() {
    let keys = with_enable("nginx.ingress.kubernetes.io/cors-allow-private-network: \"true\"");
    let (_, refused) = cors_of(&keys);
    assert_eq!(refused, Vec::<String>::new());
}

#[test]
fn the_cors_of_one_ingress_stays_on_its_own_paths() {
    let with = mk_ingress("a", ENABLE, &mk_rule("a.example.com", &[("/api", "Prefix")]));
    let without = mk_ingress("b", "", &mk_rule("a.example.com", &[("/", "Prefix")]));
    let compiled = compile_nginx(&[with, without]);
    let host = &compiled.table.hosts[0];
    let by_path: Vec<(&str, bool)> = host
        .paths
        .iter()
        .map(|p| (p.path.as_str(), p.options.cors.is_some()))
        .collect();
    assert!(
        by_path.iter().all(|(path, cors)| *cors == path.starts_with("/api")),
        "{by_path:?}"
    );
    assert!(by_path.iter().any(|(_, cors)| *cors));
}

#[test]
fn the_routes_document_shows_a_routes_cors() {
    let rule = mk_rule("a.example.com", &[("/", "Prefix")]);
    let compiled = compile_nginx(&[mk_ingress("a", ENABLE, &rule)]);
    let json = serde_json::to_value(&compiled.table).expect("a table serialises");
    let cors = &json["hosts"][0]["paths"][0]["cors"];
    assert_eq!(cors["allow_origin"], "any");
    assert_eq!(cors["max_age"], 1728000);
}

/// main.go's regexes verbatim, compiled as Go compiles them (ASCII `\d`; Go's `\s` is
/// `[\t\n\f\r ]`), each beside the hand-written check that stands for it.
mod validators {
    use proptest::prelude::*;

    use super::super::super::cors::{is_expose_list, is_header_list, is_method_list, is_origin, is_origin_list};

    fn go(pattern: &str) -> regex::Regex {
        let pattern = pattern.replace(r"\s", r"[\t\n\f\r ]").replace(r"\d", "[0-9]");
        regex::Regex::new(&pattern).expect("a valid regex")
    }

    proptest! {
        #[test]
        fn the_origin_list_check_is_the_validators_regex(value in "[aZ0:/*.,n-]{0,12}|[a-z]{1,3}://[*.a-z0-9:,]{0,10}") {
            let regex = go(r"^((((([a-z]+://)?(\*\.)?[A-Za-z0-9\-.]*(:\d+)?,?)|null)+)|\*)?$");
            prop_assert_eq!(is_origin_list(&value), regex.is_match(&value), "{:?}", value);
        }

        #[test]
        fn the_origin_check_is_parses_regex(value in "[aZ0:/*.n-]{0,10}|[a-z]{1,3}://[*.a-z0-9:]{0,8}") {
            let regex = go(r"^([a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:\d+)?|\*|null)?$");
            prop_assert_eq!(is_origin(&value) || value.is_empty(), regex.is_match(&value), "{:?}", value);
        }

        #[test]
        fn the_list_checks_are_main_gos_regexes(value in "[aB1_*,; \t\x0c\x0b-]{0,10}") {
            prop_assert_eq!(is_method_list(&value), go(r"^([A-Za-z]+,?\s?)+$").is_match(&value), "{:?}", value);
            prop_assert_eq!(is_expose_list(&value), go(r"^(([A-Za-z0-9\-\_]+|\*),?\s?)+$").is_match(&value), "{:?}", value);
            prop_assert_eq!(is_header_list(&value), go(r"^[A-Za-z0-9-_, ]*$").is_match(&value), "{:?}", value);
        }
    }
}
