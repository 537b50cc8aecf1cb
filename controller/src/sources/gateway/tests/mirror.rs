//! `RequestMirror` filters: each mirror's backend resolved as a backendRef is, its share
//! carried on the rule's paths, its backend in the table.

use shunt_spec::{MirrorTarget, RequestMirrors};

use super::*;

fn mirrors_of(compiled: &Compiled) -> Option<RequestMirrors> {
    paths(&compiled.table, &exact("web.example.com"))[0]
        .options
        .mirror
        .clone()
}

#[test]
fn each_mirror_is_a_resolved_backend_with_its_share() {
    let rules = "[{filters: [\
        {type: RequestMirror, requestMirror: {backendRef: {name: v2, port: 8080}}}, \
        {type: RequestMirror, requestMirror: {backendRef: {name: v3, port: 8080}, fraction: {numerator: 25, denominator: 50}}}], \
        backendRefs: [{name: v1, port: 8080}]}]";
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", rules));
    assert_eq!(
        parent_conditions(&status(&compiled), "web", "same"),
        [
            condition("Accepted", "True", "Accepted"),
            condition("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    let expected = RequestMirrors {
        targets: vec![
            MirrorTarget::all("infra/v2:8080".into()),
            MirrorTarget::share("infra/v3:8080".into(), 25, 50).unwrap(),
        ],
    };
    assert_eq!(mirrors_of(&compiled), Some(expected));
    for id in ["infra/v1:8080", "infra/v2:8080", "infra/v3:8080"] {
        assert!(compiled.table.backends.contains_key(id), "{id}");
    }
}

#[test]
fn a_mirror_to_another_namespace_without_a_grant_is_left_out_and_unresolved() {
    let rules = "[{filters: [{type: RequestMirror, requestMirror: {backendRef: {name: v2, namespace: other, port: 8080}, percent: 20}}], \
                 backendRefs: [{name: v1, port: 8080}]}]";
    let compiled = compiled(&mk_route("infra", "web", "same", "[web.example.com]", rules));
    assert_eq!(
        parent_conditions(&status(&compiled), "web", "same")[1],
        condition("ResolvedRefs", "False", "RefNotPermitted")
    );
    // The rule still forwards, without the mirror.
    assert_eq!(mirrors_of(&compiled), None);
    assert_eq!(
        paths(&compiled.table, &exact("web.example.com"))[0].backend,
        "infra/v1:8080"
    );
}
