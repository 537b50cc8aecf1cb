//! `upstream-hash-by` parsed as util.lua's `parse_complex_value` (lines 30-56) splits it, and
//! keyed by backend as controller.go's `createUpstreams` keys it.

use shunt_spec::{HashKey, KeyPart};

use super::*;
use crate::shadow::nginx::hash::key;

fn text(text: &str) -> KeyPart {
    KeyPart::Text(text.to_string())
}

#[test]
fn variables_braced_or_not_and_text_make_the_key_in_order() {
    let parts = |value: &str| key(value).map(|key| key.map(|key| key.parts));
    assert_eq!(parts("$request_uri"), Ok(Some(vec![KeyPart::RequestUri])));
    assert_eq!(
        parts("${request_uri}-text$host"),
        Ok(Some(vec![KeyPart::RequestUri, text("-text"), KeyPart::Host]))
    );
    assert_eq!(
        parts("$http_x_user$cookie_Session"),
        Ok(Some(vec![
            KeyPart::Header("x-user".into()),
            KeyPart::Cookie("Session".into())
        ]))
    );
    assert_eq!(parts("v1-$"), Ok(Some(vec![text("v1-"), text("$")])));
    assert_eq!(parts(""), Ok(None));
    // `$request_uri_x` is one variable name to the pattern, and not one shunt reads.
    assert_eq!(
        parts("$request_uri_x"),
        Err(super::super::annotations::Refusal::Unsupported)
    );
    assert_eq!(
        parts("$remote_user"),
        Err(super::super::annotations::Refusal::Unsupported)
    );
    assert_eq!(parts("$uri?x"), Err(super::super::annotations::Refusal::Invalid));
}

#[test]
fn the_first_ingress_naming_a_backend_gives_every_route_to_it_its_key() {
    let hashed = "nginx.ingress.kubernetes.io/upstream-hash-by: \"$remote_addr\"";
    let compiled = compile_nginx(&[
        mk_ingress("a", hashed, &mk_rule("a.example.com", &[("/a", "Prefix")])),
        mk_ingress("b", "", &mk_rule("a.example.com", &[("/b", "Prefix")])),
    ]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let table = table(&compiled);
    for path in ["/a", "/b"] {
        let route = table.lookup("a.example.com", path).expect("a route");
        let balance = route.rules.balance.as_ref().expect("a hash key");
        assert_eq!(
            balance.hash,
            Some(HashKey {
                parts: vec![KeyPart::RemoteAddr]
            }),
            "{path}"
        );
    }
}

#[test]
fn a_canary_backend_takes_the_key_of_its_own_ingress() {
    let canary =
        "nginx.ingress.kubernetes.io/canary: \"true\"\nnginx.ingress.kubernetes.io/upstream-hash-by: \"$host\"";
    let compiled = compile_nginx(&[
        mk_ingress("a", "", &mk_rule("a.example.com", &[("/", "Prefix")])),
        mk_ingress(
            "b",
            canary,
            &mk_rule("a.example.com", &[("/", "Prefix")]).replace("name: web", "name: api"),
        ),
    ]);
    let table = table(&compiled);
    let balance = table
        .lookup("a.example.com", "/")
        .and_then(|route| route.rules.balance.clone());
    let balance = balance.expect("a canary");
    assert_eq!(balance.hash, None);
    let canary = balance.canary.as_ref().expect("a canary");
    assert_eq!(
        canary.hash,
        Some(HashKey {
            parts: vec![KeyPart::Host]
        })
    );
}
