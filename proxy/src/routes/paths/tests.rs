//! The list and the root a host with few rules gets answer as the matchit tree would.

use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::routes::conditions::NoFacts;
use crate::{metrics::RouteStats, upstream::Upstream};

/// A route named after the rule that made it, so a lookup says which rule matched.
fn mk_route(name: &str) -> Arc<Route> {
    Arc::new(Route {
        name: name.into(),
        source: "ns/ing".into(),
        upstream: Arc::new(Upstream::new(name, Default::default(), Vec::new(), Default::default())),
        stats: RouteStats::detached(),
        ssl_redirect: false,
        redirect: None,
        client_protocol_header: None,
        rules: Default::default(),
    })
}

fn mk_builder(rules: &[(PathKind, String)]) -> PathTableBuilder<'_> {
    let mut builder = PathTableBuilder::default();
    for (kind, path) in rules {
        builder.add(path, *kind, mk_route(&format!("{kind:?} {path}")));
    }
    builder
}

fn name(route: Option<&Arc<Route>>) -> Option<&str> {
    route.map(|route| &*route.name)
}

#[test]
fn a_host_with_a_few_plain_rules_gets_a_list_and_one_with_braces_a_tree() {
    let plain = [
        (PathKind::Prefix, "/".to_string()),
        (PathKind::Exact, "/api".to_string()),
    ];
    assert!(matches!(mk_builder(&plain).build().0, PathTable::List(_)));
    let braces = [
        (PathKind::Prefix, "/".to_string()),
        (PathKind::Exact, "/{id}".to_string()),
    ];
    let (table, rejected) = mk_builder(&braces).build();
    assert!(matches!(table, PathTable::Tree(_)));
    assert_eq!(rejected, Vec::<(String, String)>::new());
    assert_eq!(name(table.lookup("/{id}", &NoFacts)), Some("Exact /{id}"));
    assert_eq!(name(table.lookup("/7", &NoFacts)), Some("Prefix /"));
}

#[test]
fn a_list_prefers_exact_then_the_longest_whole_element_prefix() {
    let rules = [
        (PathKind::Prefix, "/".to_string()),
        (PathKind::Prefix, "/a".to_string()),
        (PathKind::Prefix, "/a/b/".to_string()),
        (PathKind::Exact, "/a/b".to_string()),
    ];
    let (table, _) = mk_builder(&rules).build();
    assert!(matches!(table, PathTable::List(_)));
    for (path, rule) in [
        ("/a/b", "Exact /a/b"),
        ("/a/b/", "Prefix /a/b/"),
        ("/a/b/c", "Prefix /a/b/"),
        ("/a/bc", "Prefix /a"),
        ("/a", "Prefix /a"),
        ("/ab", "Prefix /"),
        ("", "Prefix /"),
    ] {
        assert_eq!(name(table.lookup(path, &NoFacts)), Some(rule), "{path:?}");
    }
}

proptest! {
    #[test]
    fn a_host_with_few_rules_answers_every_path_as_its_tree_does(
        rules in prop::collection::vec((any::<bool>(), "/[ab/]{0,4}"), 1..=LIST_MAX),
        paths in prop::collection::vec("[/ab.%]{0,8}", 1..16),
    ) {
        let rules: Vec<(PathKind, String)> = rules
            .into_iter()
            .map(|(exact, path)| (if exact { PathKind::Exact } else { PathKind::Prefix }, path))
            .collect();
        let (list, _) = mk_builder(&rules).build();
        prop_assert!(!matches!(list, PathTable::Tree(_)));
        let (tree, rejected) = mk_builder(&rules).build_tree();
        prop_assert_eq!(rejected, Vec::<(String, String)>::new());
        for path in &paths {
            prop_assert_eq!(name(list.lookup(path, &NoFacts)), name(tree.lookup(path, &NoFacts)), "path {:?}", path);
        }
    }
}

#[test]
fn a_host_whose_rules_are_all_the_character_prefix_slash_gets_no_tree() {
    let rules = [
        (PathKind::CharPrefix, "/".to_string()),
        (PathKind::CharPrefix, "/".to_string()),
    ];
    let (table, _) = mk_builder(&rules).build();
    assert!(matches!(table, PathTable::CharRoot(_)));
    assert_eq!(name(table.lookup("/any/path", &NoFacts)), Some("CharPrefix /"));
    assert_eq!(name(table.lookup("relative", &NoFacts)), None);
    let mixed = [
        (PathKind::CharPrefix, "/".to_string()),
        (PathKind::Prefix, "/".to_string()),
    ];
    assert!(matches!(mk_builder(&mixed).build().0, PathTable::Tree(_)));
}

proptest! {
    #[test]
    fn a_character_prefix_slash_host_answers_every_path_as_its_tree_does(
        copies in 1..4usize,
        paths in prop::collection::vec("[/ab.%]{0,8}", 1..16),
    ) {
        let rules = vec![(PathKind::CharPrefix, "/".to_string()); copies];
        let (root, _) = mk_builder(&rules).build();
        prop_assert!(matches!(root, PathTable::CharRoot(_)));
        let (tree, _) = mk_builder(&rules).build_tree();
        for path in &paths {
            prop_assert_eq!(name(root.lookup(path, &NoFacts)), name(tree.lookup(path, &NoFacts)), "path {:?}", path);
        }
    }
}
