//! IngressClass selection: which Ingresses this controller serves, and which only in shadow.

use std::collections::BTreeSet;

use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use super::CompileOptions;

/// The legacy way to pick a class, still common in charts.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// How an Ingress was selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    Ours,
    /// Only through `shadow_classes`: routed, but its status belongs to another controller.
    Shadow,
}

/// The IngressClasses this controller owns, resolved once per compile.
pub struct Classes<'a> {
    options: &'a CompileOptions,
    /// Names of IngressClasses whose `spec.controller` is ours.
    owned: BTreeSet<&'a str>,
    /// One of ours is annotated as the cluster default.
    owns_default: bool,
}

// === impl Classes ===

impl<'a> Classes<'a> {
    pub fn new(classes: &'a [IngressClass], options: &'a CompileOptions) -> Self {
        let ours = classes.iter().filter(|class| {
            class.spec.as_ref().and_then(|spec| spec.controller.as_deref()) == Some(options.controller_name.as_str())
        });
        let mut owned = BTreeSet::new();
        let mut owns_default = false;
        for class in ours {
            owned.extend(class.metadata.name.as_deref());
            let annotations = class.metadata.annotations.as_ref();
            owns_default |= annotations
                .and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION))
                .is_some_and(|v| v == "true");
        }
        Classes {
            options,
            owned,
            owns_default,
        }
    }

    /// `None` means the Ingress belongs to another controller (or to none): leave it alone.
    pub fn select(&self, ingress: &Ingress) -> Option<Selection> {
        let field = ingress
            .spec
            .as_ref()
            .and_then(|spec| spec.ingress_class_name.as_deref());
        let annotation = ingress
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CLASS_ANNOTATION));
        // The field wins over the annotation; an empty value counts as unset.
        let class = field
            .filter(|c| !c.is_empty())
            .or(annotation.map(String::as_str).filter(|c| !c.is_empty()));
        let Some(class) = class else {
            return (self.owns_default || self.options.watch_ingress_without_class).then_some(Selection::Ours);
        };
        let named = |list: &[String]| list.iter().any(|name| name == class);
        if self.owned.contains(class) || named(&self.options.ingress_classes) {
            Some(Selection::Ours)
        } else if named(&self.options.shadow_classes) {
            Some(Selection::Shadow)
        } else {
            None
        }
    }
}
