//! What a route's options may not combine or carry.

use super::*;
use crate::spec::{BackendSplit, PrefixReplacement, RedirectSpec};

fn refused(options: RouteOptions) -> String {
    RouteRules::from_options(&options).expect_err("refused")
}

fn replacing(replacement: PathReplacement) -> RouteOptions {
    RouteOptions {
        path_replacement: Some(replacement),
        ..Default::default()
    }
}

fn prefix(replacement: &str) -> PrefixReplacement {
    PrefixReplacement {
        matched: "/a".into(),
        replacement: replacement.into(),
    }
}

#[test]
fn a_replacement_must_be_a_path_and_gateway_apis_empty_prefix_is_one() {
    assert!(RouteRules::from_options(&replacing(PathReplacement::Prefix(prefix("")))).is_ok());
    assert!(RouteRules::from_options(&replacing(PathReplacement::Full("/x/y".into()))).is_ok());
    for bad in ["x", "/a?b", "/a#b", "/a b", ""] {
        let reason = refused(replacing(PathReplacement::Full(bad.into())));
        assert!(reason.ends_with("is not a path"), "{bad:?}: {reason}");
    }
    assert!(refused(replacing(PathReplacement::Prefix(prefix("/a\u{7f}b")))).contains("not a path"));
    let long = format!("/{}", "a".repeat(MAX_VALUE_LEN));
    assert!(refused(replacing(PathReplacement::Full(long))).contains("not a path"));
    let redirect = RedirectSpec {
        code: 302,
        scheme: None,
        host: None,
        port: None,
        path: None,
        drop_query: false,
        location: None,
        rewritten: false,
        www: false,
        replace_prefix: Some(prefix("no-slash")),
    };
    let options = RouteOptions {
        redirect: Some(redirect),
        ..Default::default()
    };
    assert!(refused(options).contains("not a path"));
}

#[test]
fn a_split_beside_a_redirect_is_refused() {
    let options = RouteOptions {
        split: Some(BackendSplit { choices: vec![] }),
        redirect: Some(crate::redirect::to_https()),
        ..Default::default()
    };
    assert!(refused(options).contains("split"));
}

#[test]
fn a_route_without_options_gets_the_rules_no_options_ask_for() {
    // The table build hands such routes `unchanged()` without reading their options.
    let asked = RouteRules::from_options(&RouteOptions::default()).expect("no options to refuse");
    assert_eq!(format!("{asked:?}"), format!("{:?}", RouteRules::unchanged()));
}

#[test]
fn rules_a_route_rarely_has_are_boxed() {
    // A route with options holds its own rules; 328 B with HSTS, Host, pace, timeouts and
    // deadlines inline (336 with the mirrors' pointer).
    assert!(size_of::<RouteRules>() <= 192, "{}", size_of::<RouteRules>());
}
