use proptest::prelude::*;
use shunt_spec::ValueMatch;

use super::{
    matches::{Translated, translate},
    objects::{GRPCMethodMatch, GRPCRouteMatch},
};

fn mk_match(type_: Option<&str>, service: Option<&str>, method: Option<&str>) -> GRPCRouteMatch {
    GRPCRouteMatch {
        method: Some(GRPCMethodMatch {
            type_: type_.map(str::to_string),
            service: service.map(str::to_string),
            method: method.map(str::to_string),
        }),
        headers: Vec::new(),
    }
}

fn path_of(translated: &Translated) -> (String, String) {
    let path = translated.http.path.as_ref().expect("a path");
    (
        path.type_.clone().unwrap_or_default(),
        path.value.clone().unwrap_or_default(),
    )
}

#[test]
fn exact_service_and_method_name_a_table_path() {
    let both = translate(&mk_match(None, Some("pkg.Svc"), Some("Echo"))).expect("valid");
    assert_eq!(path_of(&both), ("Exact".into(), "/pkg.Svc/Echo".into()));
    assert_eq!((both.path, both.chars), (None, (7, 4)));
    let service = translate(&mk_match(Some("Exact"), Some(".pkg.Svc"), None)).expect("valid");
    assert_eq!(path_of(&service), ("PathPrefix".into(), "/.pkg.Svc".into()));
    assert_eq!(service.path, None);
}

#[test]
fn a_method_alone_or_a_regex_is_a_whole_path_condition() {
    let method = translate(&mk_match(None, None, Some("Echo"))).expect("valid");
    assert_eq!(path_of(&method), ("PathPrefix".into(), "/".into()));
    assert_eq!(method.path, Some(ValueMatch::Regex("/[^/]+/Echo".into())));
    let regex = translate(&mk_match(Some("RegularExpression"), None, Some("Echo.*"))).expect("valid");
    assert_eq!(regex.path, Some(ValueMatch::Regex("/(?:[^/]+)/(?:Echo.*)".into())));
    let none = translate(&GRPCRouteMatch::default()).expect("valid");
    assert_eq!((none.http.path, none.path, none.chars), (None, None, (0, 0)));
}

#[test]
fn what_cannot_name_a_grpc_path_is_refused_with_a_reason() {
    let refused = |raw: GRPCRouteMatch| translate(&raw).expect_err("refused");
    assert!(refused(mk_match(None, None, None)).contains("neither"));
    assert!(refused(mk_match(None, Some(""), Some(""))).contains("neither"));
    assert!(refused(mk_match(None, Some("pkg/Svc"), Some("Echo"))).contains("service"));
    assert!(refused(mk_match(None, Some("pkg..Svc"), None)).contains("service"));
    assert!(refused(mk_match(None, Some("pkg.Svc"), Some("Echo/x"))).contains("method"));
    assert!(refused(mk_match(None, Some("pkg.Svc"), Some("1Echo"))).contains("method"));
    assert!(refused(mk_match(Some("Prefix"), Some("a"), None)).contains("type"));
    assert!(refused(mk_match(Some("RegularExpression"), Some("(a"), None)).contains("regex"));
    assert!(refused(mk_match(Some("RegularExpression"), Some("a{1000}{1000}"), None)).contains("regex"));
    let long = "a".repeat(1025);
    assert!(refused(mk_match(None, Some(&long), None)).contains("longer"));
}

fn arb_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z_][A-Za-z0-9_]{0,8}(\\.[A-Za-z_][A-Za-z0-9_]{0,8}){0,3}",
        "\\PC{0,12}",
        Just(String::new()),
    ]
}

proptest! {
    /// Any match translates or is refused, never panics; an accepted exact one is taken by the
    /// path a gRPC client sends for it, and by no path of another service or method.
    #[test]
    fn a_translated_match_takes_exactly_its_paths(
        service in prop::option::of(arb_name()),
        method in prop::option::of(arb_name()),
        regex in any::<bool>(),
    ) {
        let type_ = regex.then_some("RegularExpression");
        let Ok(translated) = translate(&mk_match(type_, service.as_deref(), method.as_deref())) else {
            return Ok(());
        };
        if regex {
            return Ok(());
        }
        let service = service.filter(|s| !s.is_empty()).unwrap_or_else(|| "x.Other".into());
        let method = method.filter(|m| !m.is_empty()).unwrap_or_else(|| "Other".into());
        let sent = format!("/{service}/{method}");
        let takes = |path: &str| {
            let (kind, value) = path_of(&translated);
            let by_table = match kind.as_str() {
                "Exact" => path == value,
                _ => value == "/" || path == value || path.starts_with(&format!("{value}/")),
            };
            let by_condition = match &translated.path {
                None => true,
                Some(ValueMatch::Regex(pattern)) => regex::Regex::new(&format!("^(?:{pattern})$")).unwrap().is_match(path),
                Some(ValueMatch::Exact(exact)) => exact == path,
            };
            by_table && by_condition
        };
        prop_assert!(takes(&sent));
        let (kind, _) = path_of(&translated);
        if kind == "Exact" || translated.path.is_some() {
            let other = format!("/{service}/{method}Z");
            prop_assert!(!takes(&other));
        }
    }
}
