//! A listener's `allowedRoutes.namespaces.selector` (a `metav1.LabelSelector`) against a
//! namespace's labels, as the API machinery judges one: every `matchLabels` pair and every
//! `matchExpressions` requirement must hold; an empty selector selects every namespace.
//!
//! ```text
//! matchLabels {k: v}             ─▶ label k equals v
//! matchExpressions In [v..]      ─▶ label k present, its value among them
//!                  NotIn [v..]   ─▶ label k absent, or its value not among them
//!                  Exists        ─▶ label k present
//!                  DoesNotExist  ─▶ label k absent
//! anything else (an unknown operator, In/NotIn without values, Exists with some, past the
//! bounds) ─▶ invalid: the listener selects no namespace
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// The label the API server gives every Namespace, its name; a manifest's Namespace may leave
/// it out, so it is judged from the name.
pub const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Most requirements (labels and expressions) one selector may hold: the Gateway's author
/// writes it, and it is judged for every route attaching.
pub const MAX_REQUIREMENTS: usize = 64;
/// Most values one `In`/`NotIn` expression may list.
pub const MAX_VALUES: usize = 64;

/// A selector checked once, judged for each route's namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

// === impl Selector ===

impl Selector {
    /// `None` when the selector is not one the API machinery would take, or past the bounds.
    pub fn new(selector: &LabelSelector) -> Option<Selector> {
        let labels = selector.match_labels.iter().flatten();
        let expressions = selector.match_expressions.iter().flatten();
        if labels.clone().count() + expressions.clone().count() > MAX_REQUIREMENTS {
            return None;
        }
        let mut requirements: Vec<Requirement> = labels
            .map(|(key, value)| Requirement::In(key.clone(), vec![value.clone()]))
            .collect();
        for expression in expressions {
            let key = expression.key.clone();
            let values = expression.values.clone().unwrap_or_default();
            if values.len() > MAX_VALUES {
                return None;
            }
            requirements.push(match (expression.operator.as_str(), values.is_empty()) {
                ("In", false) => Requirement::In(key, values),
                ("NotIn", false) => Requirement::NotIn(key, values),
                ("Exists", true) => Requirement::Exists(key),
                ("DoesNotExist", true) => Requirement::DoesNotExist(key),
                _ => return None,
            });
        }
        Some(Selector { requirements })
    }

    /// Whether a namespace with `labels` is selected.
    #[cfg(test)]
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_namespace(None, labels)
    }

    /// Whether the namespace `name` with `labels` is selected; its name stands for
    /// [`NAME_LABEL`] when the labels lack it.
    pub fn matches_namespace(&self, name: Option<&str>, labels: &BTreeMap<String, String>) -> bool {
        let label = |key: &str| match (labels.get(key), name) {
            (Some(value), _) => Some(value.as_str()),
            (None, Some(name)) if key == NAME_LABEL => Some(name),
            _ => None,
        };
        self.requirements.iter().all(|requirement| match requirement {
            Requirement::In(key, values) => label(key).is_some_and(|value| values.iter().any(|v| v == value)),
            Requirement::NotIn(key, values) => label(key).is_none_or(|value| values.iter().all(|v| v != value)),
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::DoesNotExist(key) => label(key).is_none(),
        })
    }
}

#[cfg(test)]
mod tests;
