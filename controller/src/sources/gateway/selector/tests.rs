use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
use proptest::prelude::*;

use super::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.to_string(),
        operator: operator.to_string(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

fn selector(match_labels: &[(&str, &str)], expressions: Vec<LabelSelectorRequirement>) -> Option<Selector> {
    Selector::new(&LabelSelector {
        match_labels: (!match_labels.is_empty()).then(|| labels(match_labels)),
        match_expressions: (!expressions.is_empty()).then_some(expressions),
    })
}

#[test]
fn the_conformance_gateways_selector_takes_backend_namespaces_only() {
    // conformance/base/manifests.yaml: Gateway backend-namespaces.
    let backend = selector(&[("gateway-conformance", "backend")], vec![]).expect("valid");
    assert!(backend.matches(&labels(&[("gateway-conformance", "backend")])));
    assert!(!backend.matches(&labels(&[("gateway-conformance", "infra")])));
    assert!(!backend.matches(&labels(&[])));
}

#[test]
fn an_empty_selector_takes_every_namespace() {
    let all = selector(&[], vec![]).expect("valid");
    assert!(all.matches(&labels(&[])));
    assert!(all.matches(&labels(&[("a", "b")])));
}

#[test]
fn expressions_follow_the_operators() {
    let team = labels(&[("team", "shop"), ("tier", "web")]);
    let cases = [
        (expression("team", "In", &["shop", "blog"]), true),
        (expression("team", "In", &["blog"]), false),
        (expression("team", "NotIn", &["blog"]), true),
        (expression("team", "NotIn", &["shop"]), false),
        (expression("absent", "NotIn", &["shop"]), true),
        (expression("tier", "Exists", &[]), true),
        (expression("absent", "Exists", &[]), false),
        (expression("absent", "DoesNotExist", &[]), true),
        (expression("tier", "DoesNotExist", &[]), false),
    ];
    for (expression, expected) in cases {
        let what = format!("{expression:?}");
        let one = selector(&[], vec![expression]).expect("valid");
        assert_eq!(one.matches(&team), expected, "{what}");
    }
}

#[test]
fn malformed_or_oversized_selectors_are_refused() {
    for bad in [
        expression("team", "In", &[]),
        expression("team", "NotIn", &[]),
        expression("team", "Exists", &["shop"]),
        expression("team", "DoesNotExist", &["shop"]),
        expression("team", "Equals", &["shop"]),
    ] {
        let what = format!("{bad:?}");
        assert_eq!(selector(&[], vec![bad]), None, "{what}");
    }
    let many: Vec<LabelSelectorRequirement> = (0..=MAX_REQUIREMENTS)
        .map(|at| expression(&format!("k{at}"), "Exists", &[]))
        .collect();
    assert_eq!(selector(&[], many), None);
    let values: Vec<String> = (0..=MAX_VALUES).map(|at| format!("v{at}")).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    assert_eq!(selector(&[], vec![expression("k", "In", &values)]), None);
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c"]).prop_map(str::to_string)
}

fn value() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["x", "y", "z"]).prop_map(str::to_string)
}

fn namespace_labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(key(), value(), 0..3)
}

fn requirement() -> impl Strategy<Value = LabelSelectorRequirement> {
    let operator = prop::sample::select(vec!["In", "NotIn", "Exists", "DoesNotExist"]);
    (key(), operator, prop::collection::vec(value(), 1..3)).prop_map(|(key, operator, values)| {
        let values = matches!(operator, "In" | "NotIn").then_some(values);
        LabelSelectorRequirement {
            key,
            operator: operator.to_string(),
            values,
        }
    })
}

/// The requirement that holds exactly where `requirement` does not.
fn negated(requirement: &LabelSelectorRequirement) -> LabelSelectorRequirement {
    let operator = match requirement.operator.as_str() {
        "In" => "NotIn",
        "NotIn" => "In",
        "Exists" => "DoesNotExist",
        _ => "Exists",
    };
    LabelSelectorRequirement {
        operator: operator.to_string(),
        ..requirement.clone()
    }
}

fn one(requirements: Vec<LabelSelectorRequirement>, match_labels: BTreeMap<String, String>) -> Selector {
    Selector::new(&LabelSelector {
        match_labels: Some(match_labels),
        match_expressions: Some(requirements),
    })
    .expect("a valid selector")
}

proptest! {
    /// A selector is the conjunction of its requirements: it selects a namespace exactly when
    /// each of them alone does.
    #[test]
    fn a_selector_is_the_conjunction_of_its_requirements(
        requirements in prop::collection::vec(requirement(), 0..4),
        match_labels in namespace_labels(),
        labels in namespace_labels(),
    ) {
        let whole = one(requirements.clone(), match_labels.clone()).matches(&labels);
        let each_expression = requirements.iter().all(|r| one(vec![r.clone()], BTreeMap::new()).matches(&labels));
        let each_label = match_labels.iter().all(|(k, v)| {
            one(Vec::new(), BTreeMap::from([(k.clone(), v.clone())])).matches(&labels)
        });
        prop_assert_eq!(whole, each_expression && each_label);
    }

    /// `In`/`NotIn` and `Exists`/`DoesNotExist` are each other's negation; a namespace's own
    /// labels as `matchLabels` select it.
    #[test]
    fn operators_negate_each_other_and_own_labels_select(
        requirement in requirement(),
        labels in namespace_labels(),
    ) {
        let holds = one(vec![requirement.clone()], BTreeMap::new()).matches(&labels);
        let negation = one(vec![negated(&requirement)], BTreeMap::new()).matches(&labels);
        prop_assert_ne!(holds, negation);
        prop_assert!(one(Vec::new(), labels.clone()).matches(&labels));
        let present = labels.get(&requirement.key);
        let values = requirement.values.clone().unwrap_or_default();
        let expected = match requirement.operator.as_str() {
            "In" => present.is_some_and(|v| values.contains(v)),
            "Exists" => present.is_some(),
            _ => holds,
        };
        prop_assert_eq!(holds, expected);
    }
}
