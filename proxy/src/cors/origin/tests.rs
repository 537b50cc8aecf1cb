//! Gateway API's origin patterns against a regex written from the CRD's description
//! (`allowOrigins`: `*` greedy to the left over DNS labels, the port defaulted by the scheme).

use proptest::prelude::*;

use super::whole_matches;
use crate::spec::OriginPattern;

fn matches(pattern: &str, origin: &str) -> bool {
    whole_matches(
        &OriginPattern::parse(pattern).expect("a valid pattern"),
        origin.as_bytes(),
    )
}

#[test]
fn a_wildcard_takes_any_number_of_labels_but_at_least_one() {
    assert!(matches("https://*.bar.com", "https://www.bar.com"));
    assert!(matches("https://*.bar.com", "https://xpto.www.bar.com"));
    assert!(!matches("https://*.bar.com", "https://bar.com"));
    assert!(!matches("https://*.bar.com", "https://.bar.com"));
    assert!(!matches("https://*.bar.com", "https://evil.com/.bar.com"));
    assert!(!matches("https://*.bar.com", "http://www.bar.com"));
}

#[test]
fn the_whole_origin_must_match_with_ports_defaulted_by_scheme() {
    assert!(matches("https://www.foo.com", "https://www.foo.com"));
    assert!(matches("https://www.foo.com", "HTTPS://WWW.foo.com:443"));
    assert!(matches("http://a.example:80", "http://a.example"));
    assert!(!matches("https://www.foo.com", "https://www.foo.com:8443"));
    assert!(!matches("https://www.foo.com", "https://evil.https://www.foo.com"));
    assert!(!matches("https://www.foo.com", "https://www.foo.com.evil"));
    assert!(!matches("https://www.foo.com", "https://www.foo.com, https://x"));
    assert!(matches("http://*:8080", "http://[::1]:8080"));
    assert!(!matches("http://*", "http://[::1]:8080"));
    assert!(!matches("https://*", "null"));
}

/// A pattern the CRD admits: scheme, `*` or labels with an optional leading `*.`, a port or not.
fn pattern() -> impl Strategy<Value = String> {
    let labels = "[a-zA-Z0-9-]{1,3}(\\.[a-zA-Z0-9-]{1,3}){0,2}";
    (
        prop_oneof![Just("http"), Just("https")],
        prop_oneof![Just("*".to_string()), labels.prop_map(|l| format!("*.{l}")), labels],
        proptest::option::of(prop_oneof![Just(80u16), Just(443), 1u16..=65535]),
    )
        .prop_map(|(scheme, host, port)| {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            format!("{scheme}://{host}{port}")
        })
}

/// The regex the CRD's description gives `pattern` (as parsed: its port explicit).
fn reference(pattern: &OriginPattern) -> regex::Regex {
    let host = match pattern.host() {
        crate::spec::OriginHost::Any => "[A-Za-z0-9.-]+".to_string(),
        crate::spec::OriginHost::Suffix(suffix) => format!("([A-Za-z0-9-]+\\.)*[A-Za-z0-9-]+{}", regex::escape(suffix)),
        crate::spec::OriginHost::Exact(exact) => regex::escape(exact),
    };
    let port = pattern.port();
    let port = match port == pattern.scheme().default_port() {
        true => format!("(:{port})?"),
        false => format!(":{port}"),
    };
    regex::Regex::new(&format!("(?i-u)^{}://{host}{port}$", pattern.scheme().as_str())).unwrap()
}

proptest! {
    #[test]
    fn an_origin_is_allowed_exactly_when_the_descriptions_regex_matches_it(
        raw in pattern(),
        scheme in prop_oneof![Just("http"), Just("https"), Just("HTTPS")],
        label in "[A-Za-z0-9.-]{0,8}",
        upper in any::<bool>(),
        port in proptest::option::of(prop_oneof![Just(80u32), Just(443), 1u32..=70000]),
    ) {
        let pattern = OriginPattern::parse(&raw).expect("the strategy writes valid patterns");
        let host = raw.split_once("://").unwrap().1;
        let host = host.split(':').next().unwrap().replacen('*', &label, 1);
        let host = if upper { host.to_ascii_uppercase() } else { host };
        let origin = format!("{scheme}://{host}{}", port.map(|p| format!(":{p}")).unwrap_or_default());
        let expected = reference(&pattern).is_match(&origin);
        prop_assert_eq!(whole_matches(&pattern, origin.as_bytes()), expected, "{} against {}", origin, raw);
    }

    /// What is parsed is what the CRD's pattern admits, with a port of 1 to 65535.
    #[test]
    fn patterns_parse_when_the_crd_admits_them(text in "(https?|ftp)://(\\*\\.|\\*)?[a-zA-Z0-9._-]{0,12}(:[0-9]{0,6})?") {
        let crd = regex::Regex::new(
            r"^(http(s)?)://(((\*\.)?([a-zA-Z0-9\-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$",
        ).unwrap();
        let port_ok = match text.rsplit_once(':') {
            Some((head, port)) if !head.ends_with("http") && !head.ends_with("https") && !head.ends_with("ftp") => {
                port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
            }
            _ => true,
        };
        prop_assert_eq!(OriginPattern::parse(&text).is_some(), crd.is_match(&text) && port_ok);
    }
}
