//! Header edits: set, add, remove in that order; fields that frame the message refused.

use super::*;

fn mk_edits(set: &[(&str, &str)], add: &[(&str, &str)], remove: &[&str]) -> spec::HeaderEdits {
    let pairs = |list: &[(&str, &str)]| list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    spec::HeaderEdits {
        set: pairs(set),
        add: pairs(add),
        remove: remove.iter().map(|n| n.to_string()).collect(),
    }
}

fn values(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

#[test]
fn set_replaces_add_appends_and_remove_deletes_in_that_order() {
    let spec = mk_edits(
        &[("x-set", "new"), ("x-both", "set")],
        &[("x-add", "2"), ("x-both", "added"), ("x-gone", "never")],
        &["x-remove", "x-gone"],
    );
    let edits = HeaderEdits::new(&spec, "request").unwrap();
    let mut headers = HeaderMap::new();
    for (name, value) in [
        ("x-set", "a"),
        ("x-set", "b"),
        ("x-add", "1"),
        ("x-remove", "r"),
        ("x-keep", "k"),
    ] {
        headers.append(name, HeaderValue::from_static(value));
    }
    edits.apply(&mut headers);
    assert_eq!(values(&headers, "x-set"), ["new"]);
    assert_eq!(values(&headers, "x-add"), ["1", "2"]);
    assert_eq!(values(&headers, "x-both"), ["set", "added"]);
    assert!(values(&headers, "x-remove").is_empty());
    assert!(values(&headers, "x-gone").is_empty(), "remove comes after add");
    assert_eq!(values(&headers, "x-keep"), ["k"]);
}

#[test]
fn a_set_or_removed_field_leaves_nothing_the_proxy_added_behind() {
    let edits = HeaderEdits::new(&mk_edits(&[("x-a", "route")], &[], &["x-b"]), "request").unwrap();
    let mut headers = HeaderMap::new();
    let mut added = AddedFields::default();
    added.push(HeaderName::from_static("x-a"), HeaderValue::from_static("proxy"));
    added.push(HeaderName::from_static("x-b"), HeaderValue::from_static("proxy"));
    added.push(HeaderName::from_static("x-c"), HeaderValue::from_static("proxy"));
    edits.apply_to_request(&mut headers, &mut added);
    added.append_to(&mut headers);
    assert_eq!(values(&headers, "x-a"), ["route"]);
    assert!(values(&headers, "x-b").is_empty());
    assert_eq!(values(&headers, "x-c"), ["proxy"]);
}

#[test]
fn framing_fields_bad_names_bad_values_and_too_many_edits_are_refused() {
    let refused = |spec: spec::HeaderEdits| HeaderEdits::new(&spec, "response").unwrap_err();
    assert!(refused(mk_edits(&[("content-length", "1")], &[], &[])).contains("framing"));
    assert!(refused(mk_edits(&[], &[("transfer-encoding", "chunked")], &[])).contains("framing"));
    assert!(refused(mk_edits(&[], &[], &["connection"])).contains("framing"));
    assert!(refused(mk_edits(&[("host", "elsewhere")], &[], &[])).contains("framing"));
    assert!(refused(mk_edits(&[("bad name", "1")], &[], &[])).contains("not a field name"));
    assert!(refused(mk_edits(&[("x", "a\r\nb")], &[], &[])).contains("not a field value"));
    let long = "v".repeat(MAX_VALUE_LEN + 1);
    assert!(refused(mk_edits(&[("x", &long)], &[], &[])).contains("longer"));
    let many: Vec<&str> = vec!["x"; MAX_EDITS + 1];
    assert!(refused(mk_edits(&[], &[], &many)).contains("more than"));
}
