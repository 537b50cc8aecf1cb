//! Request conditions: every one must hold, values whole, fields joined, first query value.

use http::{HeaderMap, HeaderName, HeaderValue, Method};

use super::*;
use crate::spec::{FieldCondition, RequestConditions, ValueMatch};

fn exact(name: &str, value: &str) -> FieldCondition {
    FieldCondition {
        name: name.into(),
        value: ValueMatch::Exact(value.into()),
    }
}

fn regex(name: &str, pattern: &str) -> FieldCondition {
    FieldCondition {
        name: name.into(),
        value: ValueMatch::Regex(pattern.into()),
    }
}

fn mk_conditions(method: Option<&str>, headers: Vec<FieldCondition>, query: Vec<FieldCondition>) -> Conditions {
    let spec = RequestConditions {
        method: method.map(str::to_string),
        headers,
        query,
        path: None,
    };
    Conditions::new(&spec).expect("valid conditions")
}

/// Whether a request with `method`, `fields` (in order, repeats allowed) and `query` satisfies.
fn holds(conditions: &Conditions, method: &str, fields: &[(&str, &str)], query: Option<&str>) -> bool {
    let mut headers = HeaderMap::new();
    for (name, value) in fields {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let facts = RequestFacts {
        method: &method,
        headers: &headers,
        query,
    };
    facts.satisfy(conditions)
}

#[test]
fn the_method_must_be_the_named_one() {
    let get = mk_conditions(Some("GET"), vec![], vec![]);
    assert!(holds(&get, "GET", &[], None));
    assert!(!holds(&get, "POST", &[], None));
    assert!(!holds(&get, "get", &[], None));
}

#[test]
fn a_header_value_is_compared_whole_and_case_sensitively_and_its_name_is_not() {
    let version = mk_conditions(None, vec![exact("version", "one")], vec![]);
    assert!(holds(&version, "GET", &[("Version", "one")], None));
    assert!(!holds(&version, "GET", &[("version", "One")], None));
    assert!(!holds(&version, "GET", &[("version", "one-and-more")], None));
    assert!(!holds(&version, "GET", &[("other", "one")], None));
}

#[test]
fn a_regex_must_match_the_whole_value() {
    let color = mk_conditions(None, vec![regex("color", "red|gr[a-z]+")], vec![]);
    assert!(holds(&color, "GET", &[("color", "red")], None));
    assert!(holds(&color, "GET", &[("color", "green")], None));
    assert!(!holds(&color, "GET", &[("color", "dark-red")], None));
    assert!(!holds(&color, "GET", &[("color", "green2")], None));
}

#[test]
fn a_field_sent_several_times_is_read_as_its_values_joined_by_commas() {
    let joined = mk_conditions(None, vec![exact("x", "a,b")], vec![]);
    assert!(holds(&joined, "GET", &[("x", "a"), ("x", "b")], None));
    assert!(!holds(&joined, "GET", &[("x", "a")], None));
    let first = mk_conditions(None, vec![exact("x", "a")], vec![]);
    assert!(!holds(&first, "GET", &[("x", "a"), ("x", "b")], None));
}

#[test]
fn a_query_parameter_is_judged_by_its_first_value_and_its_exact_name() {
    let animal = mk_conditions(None, vec![], vec![exact("animal", "whale")]);
    assert!(holds(&animal, "GET", &[], Some("animal=whale")));
    assert!(holds(
        &animal,
        "GET",
        &[],
        Some("color=blue&animal=whale&animal=dolphin")
    ));
    assert!(!holds(&animal, "GET", &[], Some("animal=dolphin&animal=whale")));
    assert!(!holds(&animal, "GET", &[], Some("ANIMAL=whale")));
    assert!(!holds(&animal, "GET", &[], Some("animal=Whale")));
    assert!(!holds(&animal, "GET", &[], Some("animal=whaledolphin")));
    assert!(!holds(&animal, "GET", &[], None));
    let bare = mk_conditions(None, vec![], vec![exact("flag", "")]);
    assert!(holds(&bare, "GET", &[], Some("flag")));
}

#[test]
fn every_condition_must_hold_and_none_takes_every_request() {
    let all = mk_conditions(Some("POST"), vec![exact("a", "1")], vec![regex("q", "[0-9]+")]);
    assert!(holds(&all, "POST", &[("a", "1")], Some("q=42")));
    assert!(!holds(&all, "GET", &[("a", "1")], Some("q=42")));
    assert!(!holds(&all, "POST", &[("a", "2")], Some("q=42")));
    assert!(!holds(&all, "POST", &[("a", "1")], Some("q=4x")));
    let none = mk_conditions(None, vec![], vec![]);
    assert!(holds(&none, "DELETE", &[], None));
    assert!(NoFacts.satisfy(&none));
    assert!(!NoFacts.satisfy(&all));
}

#[test]
fn what_cannot_be_served_is_refused_with_a_reason() {
    let refuse = |method: Option<&str>, headers: Vec<FieldCondition>, query: Vec<FieldCondition>| {
        let spec = RequestConditions {
            method: method.map(str::to_string),
            headers,
            query,
            path: None,
        };
        Conditions::new(&spec).expect_err("refused")
    };
    assert!(refuse(None, vec![regex("x", "(unclosed")], vec![]).contains("regex"));
    assert!(refuse(None, vec![regex("x", "a)|(b")], vec![]).contains("regex"));
    assert!(refuse(None, vec![regex("x", "a{1000}{1000}")], vec![]).contains("regex"));
    assert!(refuse(Some("GE T"), vec![], vec![]).contains("method"));
    assert!(refuse(None, vec![exact("bad name", "1")], vec![]).contains("field name"));
    assert!(refuse(None, vec![exact("x", "line\nbreak")], vec![]).contains("value"));
    assert!(refuse(None, vec![], vec![exact("a&b", "1")]).contains("parameter name"));
    assert!(refuse(None, vec![], vec![exact("a", "1&b=2")]).contains("value"));
    assert!(refuse(None, vec![exact("x", &"v".repeat(MAX_VALUE_LEN + 1))], vec![]).contains("longer"));
    let many = (0..=MAX_CONDITIONS).map(|i| exact(&format!("x-{i}"), "1")).collect();
    assert!(refuse(None, many, vec![]).contains("more than"));
}

#[test]
fn a_path_condition_tests_the_whole_path_and_refuses_a_catastrophic_pattern() {
    let with_path = |value: ValueMatch| RequestConditions {
        path: Some(value),
        ..Default::default()
    };
    let any_service = Conditions::new(&with_path(ValueMatch::Regex("/[^/]+/Echo".into()))).expect("valid");
    assert!(any_service.path_holds("/pkg.Svc/Echo"));
    assert!(!any_service.path_holds("/pkg.Svc/EchoTwo"));
    assert!(!any_service.path_holds("/a/b/Echo"));
    // A path-only condition is not empty: a lookup without a request never takes it.
    assert!(!NoFacts.satisfy(&any_service));
    assert!(Conditions::new(&with_path(ValueMatch::Regex("a{1000}{1000}".into()))).is_err());
    assert!(Conditions::new(&with_path(ValueMatch::Exact("no-slash".into()))).is_err());
}
