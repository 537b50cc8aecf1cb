use proptest::prelude::*;

use super::*;

fn mk_global(pairs: &[(&str, &str)]) -> (GlobalAuth, Vec<String>) {
    let mut global = GlobalAuth::default();
    for (key, value) in pairs {
        assert!(global.set(key, value), "{key}");
    }
    let mut refusals = Vec::new();
    global.resolve(&mut refusals);
    (global, refusals)
}

#[test]
fn the_global_keys_read_as_the_annotations_of_the_same_names() {
    let (global, refusals) = mk_global(&[
        ("global-auth-url", "https://auth.example/check"),
        ("global-auth-method", "POST"),
        ("global-auth-signin", "https://auth.example/start"),
        ("global-auth-response-headers", "X-User, X-Email"),
        ("global-auth-always-set-cookie", "true"),
    ]);
    assert_eq!(refusals, Vec::<String>::new());
    let auth = global.external_auth.expect("a global gate");
    assert_eq!(auth.url.host, "auth.example");
    assert_eq!(auth.method.as_deref(), Some("POST"));
    assert_eq!(auth.response_headers, ["x-user", "x-email"]);
    assert!(auth.signin.is_some() && auth.always_set_cookie);
}

#[test]
fn the_snippet_and_other_keys_are_not_read_here() {
    let mut global = GlobalAuth::default();
    assert!(!global.set("global-auth-snippet", "return 200;"));
    assert!(!global.set("global-rate-limit-memcached-host", "x"));
    assert!(!global.set("auth-url", "http://auth.example/x"));
}

#[test]
fn a_location_with_its_own_gate_keeps_it_and_off_means_none() {
    let (global, _) = mk_global(&[("global-auth-url", "http://global.example/check")]);
    let (own, _) = mk_global(&[("global-auth-url", "http://own.example/check")]);
    let own = own.external_auth.expect("a gate");
    assert_eq!(global.gate(Some(&own), true), Some(own.clone()));
    assert_eq!(global.gate(Some(&own), false), Some(own));
    assert_eq!(global.gate(None, true), global.external_auth);
    assert_eq!(global.gate(None, false), None);
}

#[test]
fn acme_challenges_go_without_authentication_by_default() {
    let global = GlobalAuth::default();
    assert!(global.exempt("/.well-known/acme-challenge/token"));
    assert!(!global.exempt("/"));
}

proptest! {
    #[test]
    fn a_path_is_exempt_exactly_when_an_entry_starts_it(
        entries in proptest::collection::vec("/[a-z]{0,3}", 0..4),
        path in "/[a-z/]{0,6}",
    ) {
        let mut global = GlobalAuth::default();
        prop_assert!(global.set("no-auth-locations", &entries.join(" , ")));
        let expected = entries.iter().any(|e| path.starts_with(e.as_str()));
        prop_assert_eq!(global.exempt(&path), expected);
    }
}
