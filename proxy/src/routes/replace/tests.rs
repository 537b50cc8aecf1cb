//! Prefix replacement: Gateway API's table for `ReplacePrefixMatch` and the conformance cases,
//! then a model by whole elements.

use proptest::prelude::*;

use super::*;

fn mk_prefix(matched: &str, replacement: &str) -> PrefixReplacement {
    PrefixReplacement {
        matched: matched.into(),
        replacement: replacement.into(),
    }
}

#[test]
fn every_row_of_the_gateway_api_table_and_the_conformance_cases() {
    // apis/v1/httproute_types.go (v1.6.1), `ReplacePrefixMatch`; "<empty string>" is "".
    let rows = [
        ("/foo/bar", "/foo", "/xyz", "/xyz/bar"),
        ("/foo/bar", "/foo", "/xyz/", "/xyz/bar"),
        ("/foo/bar", "/foo/", "/xyz", "/xyz/bar"),
        ("/foo/bar", "/foo/", "/xyz/", "/xyz/bar"),
        ("/foo", "/foo", "/xyz", "/xyz"),
        ("/foo/", "/foo", "/xyz", "/xyz/"),
        ("/foo/bar", "/foo", "", "/bar"),
        ("/foo/", "/foo", "", "/"),
        ("/foo", "/foo", "", "/"),
        ("/foo/", "/foo", "/", "/"),
        ("/foo", "/foo", "/", "/"),
        // conformance/tests/httproute-rewrite-path.go
        ("/prefix/one/two", "/prefix/one", "/one", "/one/two"),
        ("/strip-prefix/three", "/strip-prefix", "/", "/three"),
        ("/strip-prefix", "/strip-prefix", "/", "/"),
        (
            "/prefix/rewrite-path-and-modify-headers/one",
            "/prefix/rewrite-path-and-modify-headers",
            "/prefix",
            "/prefix/one",
        ),
        // conformance/tests/httproute-redirect-path.go
        (
            "/original-prefix/lemon",
            "/original-prefix",
            "/replacement-prefix",
            "/replacement-prefix/lemon",
        ),
        (
            "/path-and-host",
            "/path-and-host",
            "/replacement-prefix",
            "/replacement-prefix",
        ),
        // The root prefix covers everything: all of the path is the rest.
        ("/a/b", "/", "/xyz", "/xyz/a/b"),
        ("/", "/", "/xyz", "/xyz"),
    ];
    for (path, matched, replacement, expected) in rows {
        assert_eq!(
            replace_prefix(&mk_prefix(matched, replacement), path),
            expected,
            "{path} {matched} {replacement}"
        );
    }
}

#[test]
fn a_path_the_prefix_does_not_cover_is_left_alone_and_a_full_replacement_is_the_whole_path() {
    assert_eq!(replace_prefix(&mk_prefix("/foo", "/xyz"), "/foobar"), "/foobar");
    let full = PathReplacement::Full("/one".into());
    assert_eq!(replace_path(&full, "/full/one/two"), "/one");
}

/// One path element: no slash, not empty.
fn element() -> impl Strategy<Value = String> {
    "[a-z0-9.%-]{1,4}"
}

proptest! {
    /// Model by elements: the result's elements are the replacement's, then those past the
    /// matched ones; it ends in `/` when the request did past its first element, or, when
    /// nothing follows the match, when the replacement as written does.
    #[test]
    fn the_matched_elements_become_the_replacements(
        matched in prop::collection::vec(element(), 0..3),
        rest in prop::collection::vec(element(), 0..3),
        replacement in prop::collection::vec(element(), 0..3),
        (trailing, matched_slash, replacement_slash) in any::<(bool, bool, bool)>(),
    ) {
        let written = |elements: &[String], slash: bool| {
            let mut text: String = elements.iter().map(|e| format!("/{e}")).collect();
            if slash || text.is_empty() {
                text.push('/');
            }
            text
        };
        let all = [matched.clone(), rest.clone()].concat();
        let trailing = trailing && !all.is_empty();
        let path = written(&all, trailing);
        let prefix = written(&matched, matched_slash);
        let with = written(&replacement, replacement_slash);
        let slash = if rest.is_empty() && !trailing { replacement_slash } else { trailing };
        let expected = written(&[replacement.clone(), rest.clone()].concat(), slash);
        let replaced = replace_prefix(&mk_prefix(&prefix, &with), &path);
        prop_assert_eq!(replaced.as_ref(), expected.as_str(), "{} {} {}", path, prefix, with);
    }
}
