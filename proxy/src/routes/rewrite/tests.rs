use proptest::prelude::*;

use super::*;
use crate::spec::RewriteTarget;

fn mk_rewrite(pattern: &str, target: &str) -> Rewrite {
    Rewrite::new(&RewriteSpec {
        pattern: pattern.to_string(),
        target: target.parse().expect("a valid target"),
        forwarded_prefix: None,
    })
    .expect("a valid rewrite")
}

fn rewritten(rewrite: &Rewrite, path: &str, query: Option<&str>) -> Option<String> {
    rewrite.apply(path, query).map(|pq| pq.as_str().to_string())
}

#[test]
fn groups_replace_their_numbers_and_the_query_string_is_kept() {
    let api = mk_rewrite("/api(/|$)(.*)", "/$2");
    assert_eq!(
        rewritten(&api, "/api/v1/users", Some("page=2")).as_deref(),
        Some("/v1/users?page=2")
    );
    assert_eq!(rewritten(&api, "/api", None).as_deref(), Some("/"));
    // Case-insensitive, as `(?i)` makes nginx's rewrite.
    assert_eq!(rewritten(&api, "/API/x", None).as_deref(), Some("/x"));
    assert_eq!(rewritten(&api, "/other", None), None);
}

#[test]
fn a_target_without_groups_replaces_the_whole_path() {
    let root = mk_rewrite("/app", "/");
    assert_eq!(
        rewritten(&root, "/app/deep/page", Some("x=1")).as_deref(),
        Some("/?x=1")
    );
}

#[test]
fn the_pattern_matches_anywhere_and_a_group_that_took_no_part_is_empty() {
    let rewrite = mk_rewrite("/v(1)|/w(2)", "/got$1$2$9");
    assert_eq!(rewritten(&rewrite, "/x/w2/y", None).as_deref(), Some("/got2"));
}

proptest! {
    #[test]
    fn the_substitution_is_the_targets_text_with_each_group_in_place(
        (a, b, c) in (0..4usize, 0..4usize, 0..4usize),
        target in prop::collection::vec(prop_oneof![
            "[a-z/._-]{1,4}".prop_map(|t| (t, 0usize)),
            (1..=3usize).prop_map(|g| (String::new(), g)),
        ], 0..6),
        query in prop::option::of("[a-z=&]{0,6}"),
    ) {
        let groups = ["a".repeat(a), "b".repeat(b), "c".repeat(c)];
        let mut spelled = String::from("/");
        let mut expected = String::from("/");
        for (text, group) in &target {
            if *group == 0 {
                spelled.push_str(text);
                expected.push_str(text);
            } else {
                spelled.push_str(&format!("${group}"));
                expected.push_str(&groups[group - 1]);
            }
        }
        let rewrite = mk_rewrite("/p/(a*)(b*)(c*)$", &spelled);
        let path = format!("/p/{}{}{}", groups[0], groups[1], groups[2]);
        if let Some(query) = &query {
            expected.push('?');
            expected.push_str(query);
        }
        prop_assert_eq!(rewritten(&rewrite, &path, query.as_deref()), Some(expected));
    }
}

#[test]
fn a_url_target_is_the_location_with_its_groups_and_a_non_empty_query() {
    let docs = Rewrite::new(&RewriteSpec {
        pattern: "/docs(/|$)(.*)".to_string(),
        target: RewriteTarget::parse_absolute("https://docs.example.com/$2").expect("a URL target"),
        forwarded_prefix: None,
    })
    .expect("a valid rewrite");
    let location =
        |path: &str, query: Option<&str>| docs.location(path, query).map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        location("/docs/a/b", Some("x=1")).as_deref(),
        Some("https://docs.example.com/a/b?x=1")
    );
    assert_eq!(
        location("/DOCS", Some("")).as_deref(),
        Some("https://docs.example.com/")
    );
    assert_eq!(location("/other", None), None);
}
