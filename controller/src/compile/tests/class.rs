//! Which Ingresses are ours: by IngressClass controller, by name, by default, in shadow.

use super::*;

const OURS: &str = "shunt.dev/ingress-controller";

/// One Ingress routing `/` on `{name}.example.com`, with its class set by `class`.
fn mk_classed(name: &str, class: impl FnOnce(Ingress) -> Ingress) -> Ingress {
    class(mk_ingress(
        "shop",
        name,
        vec![mk_rule(&format!("{name}.example.com"), vec![mk_prefix("/", "web", 80)])],
    ))
}

/// Names of the served Ingresses (with their shadow flag), checking that exactly those routed.
fn selected(state: &ClusterState, options: &CompileOptions) -> Vec<(String, bool)> {
    let compiled = compile(state, options);
    assert_eq!(compiled.diagnostics, vec![], "class selection never reports");
    let routed: Vec<String> = compiled
        .table
        .hosts
        .iter()
        .flat_map(|h| h.paths.iter().map(|p| p.source.clone()))
        .collect();
    let served: Vec<String> = compiled
        .served
        .iter()
        .map(|s| format!("{}/{}", s.namespace, s.name))
        .collect();
    assert_eq!(routed, served, "every served Ingress routes, and only those");
    compiled.served.into_iter().map(|s| (s.name, s.shadow)).collect()
}

fn ours(names: &[&str]) -> Vec<(String, bool)> {
    names.iter().map(|name| (name.to_string(), false)).collect()
}

#[test]
fn a_class_whose_ingressclass_names_our_controller_is_ours() {
    let mut state = world_with(vec![mk_classed("a", |i| with_class(i, Some("internal")))]);
    state.ingress_classes = mk_shared([mk_class("internal", OURS)]);
    let options = CompileOptions {
        ingress_classes: vec![],
        ..Default::default()
    };
    assert_eq!(selected(&state, &options), ours(&["a"]));
}

#[test]
fn a_class_named_in_the_options_is_ours_without_an_ingressclass() {
    let state = world_with(vec![mk_classed("a", |i| with_class(i, Some("shunt")))]);
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&["a"]));
}

#[test]
fn a_class_named_in_the_options_stays_ours_even_if_its_ingressclass_names_another_controller() {
    let mut state = world_with(vec![mk_classed("a", |i| with_class(i, Some("shunt")))]);
    state.ingress_classes = mk_shared([mk_class("shunt", "k8s.io/ingress-nginx")]);
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&["a"]));
}

#[test]
fn a_foreign_class_is_ignored_silently() {
    let mut state = world_with(vec![
        mk_classed("nginx", |i| with_class(i, Some("nginx"))),
        mk_classed("unknown", |i| with_class(i, Some("no-such-class"))),
        mk_classed("mine", |i| with_class(i, Some("shunt"))),
    ]);
    state.ingress_classes = mk_shared([mk_class("nginx", "k8s.io/ingress-nginx")]);
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&["mine"]));
}

#[test]
fn an_ingress_without_class_is_ours_when_our_ingressclass_is_the_default() {
    let state = ClusterState {
        ingress_classes: mk_shared([mk_default_class("internal", OURS), mk_class("shunt", OURS)]),
        ..world_with(vec![mk_classed("a", |i| with_class(i, None))])
    };
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&["a"]));
}

#[test]
fn an_ingress_without_class_is_not_ours_when_another_controller_owns_the_default() {
    let state = ClusterState {
        ingress_classes: mk_shared([
            mk_default_class("nginx", "k8s.io/ingress-nginx"),
            mk_class("shunt", OURS),
        ]),
        ..world_with(vec![mk_classed("a", |i| with_class(i, None))])
    };
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&[]));
}

#[test]
fn a_default_annotation_other_than_true_does_not_make_a_default() {
    let mut class = mk_default_class("shunt", OURS);
    class
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("ingressclass.kubernetes.io/is-default-class".into(), "yes".into());
    let state = ClusterState {
        ingress_classes: mk_shared([class]),
        ..world_with(vec![mk_classed("a", |i| with_class(i, None))])
    };
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&[]));
}

#[test]
fn an_ingress_without_class_is_ours_only_with_the_watch_flag() {
    let state = world_with(vec![
        mk_classed("a", |i| with_class(i, None)),
        mk_classed("b", |i| with_class(i, Some(""))),
    ]);
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&[]));
    let options = CompileOptions {
        watch_ingress_without_class: true,
        ..Default::default()
    };
    assert_eq!(selected(&state, &options), ours(&["a", "b"]));
}

#[test]
fn the_legacy_annotation_selects_a_class() {
    let state = world_with(vec![
        mk_classed("legacy", |i| with_class_annotation(with_class(i, None), "shunt")),
        mk_classed("foreign", |i| with_class_annotation(with_class(i, None), "nginx")),
    ]);
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&["legacy"]));
}

#[test]
fn the_class_field_beats_the_annotation() {
    let state = world_with(vec![
        mk_classed("field-ours", |i| {
            with_class_annotation(with_class(i, Some("shunt")), "nginx")
        }),
        mk_classed("field-foreign", |i| {
            with_class_annotation(with_class(i, Some("nginx")), "shunt")
        }),
    ]);
    assert_eq!(selected(&state, &CompileOptions::default()), ours(&["field-ours"]));
}

#[test]
fn a_shadow_class_is_served_and_marked_shadow() {
    let state = world_with(vec![
        mk_classed("migrating", |i| with_class(i, Some("nginx"))),
        mk_classed("legacy-shadow", |i| with_class_annotation(with_class(i, None), "nginx")),
        mk_classed("mine", |i| with_class(i, Some("shunt"))),
        mk_classed("other", |i| with_class(i, Some("traefik"))),
    ]);
    // The Ingress spec's semantics: a bare `nginx` would pick the nginx profile (shadow/nginx).
    let options = CompileOptions {
        shadow_classes: vec!["nginx=ingress".parse().expect("a shadow class")],
        ..Default::default()
    };
    let expected = vec![
        ("legacy-shadow".into(), true),
        ("migrating".into(), true),
        ("mine".into(), false),
    ];
    assert_eq!(selected(&state, &options), expected);
}

#[test]
fn a_class_both_ours_and_shadow_is_not_shadow() {
    let state = world_with(vec![mk_classed("a", |i| with_class(i, Some("shunt")))]);
    let options = CompileOptions {
        shadow_classes: vec!["shunt".into()],
        ..Default::default()
    };
    assert_eq!(selected(&state, &options), ours(&["a"]));
}

#[test]
fn served_is_sorted_by_namespace_and_name() {
    let mut late = mk_classed("a", |i| i);
    late.metadata.namespace = Some("zoo".into());
    let state = world_with(vec![
        mk_classed("c", |i| created_at(i, 1)),
        late,
        mk_classed("b", |i| i),
    ]);
    let compiled = compile(&state, &CompileOptions::default());
    let names: Vec<_> = compiled
        .served
        .iter()
        .map(|s| format!("{}/{}", s.namespace, s.name))
        .collect();
    assert_eq!(names, vec!["shop/b", "shop/c", "zoo/a"]);
}
