//! IngressClass selection: which Ingresses this controller serves, and which only in shadow.

use std::{collections::BTreeSet, fmt, str::FromStr, sync::Arc};

use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use super::CompileOptions;

/// The legacy way to pick a class, still common in charts.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// TKE's own class; TKE also treats an Ingress without a class as this one.
pub const QCLOUD_CLASS: &str = "qcloud";

/// How an Ingress was selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    Ours,
    /// Only through `shadow_classes`: routed with this profile, but its status belongs to
    /// another controller.
    Shadow(Profile),
}

/// Whose semantics a shadowed class is compiled with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// The Ingress spec's, like our own classes.
    IngressSpec,
    /// TKE's CLB (see `crate::shadow::qcloud`).
    Qcloud,
}

/// `--shadow-class NAME` or `NAME=PROFILE`: class `qcloud` gets the qcloud profile by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowClass {
    pub name: String,
    pub profile: Profile,
}

// === impl ShadowClass ===

impl From<&str> for ShadowClass {
    /// A bare class name: `qcloud` is TKE's, anything else the Ingress spec's.
    fn from(name: &str) -> Self {
        let profile = if name == QCLOUD_CLASS {
            Profile::Qcloud
        } else {
            Profile::IngressSpec
        };
        ShadowClass {
            name: name.to_string(),
            profile,
        }
    }
}

impl FromStr for ShadowClass {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, profile) = match s.split_once('=') {
            None => {
                return if s.is_empty() {
                    Err("empty class name".into())
                } else {
                    Ok(s.into())
                };
            }
            Some((name, profile)) => (name, profile),
        };
        if name.is_empty() {
            return Err(format!("{s:?}: empty class name"));
        }
        let profile = match profile {
            "qcloud" => Profile::Qcloud,
            "ingress" => Profile::IngressSpec,
            other => return Err(format!("{s:?}: unknown profile {other:?} (expected qcloud or ingress)")),
        };
        Ok(ShadowClass {
            name: name.to_string(),
            profile,
        })
    }
}

impl fmt::Display for ShadowClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.profile {
            Profile::Qcloud => write!(f, "{}=qcloud", self.name),
            Profile::IngressSpec => f.write_str(&self.name),
        }
    }
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
    pub fn new(classes: &'a [Arc<IngressClass>], options: &'a CompileOptions) -> Self {
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
        let shadow = |class: &str| self.options.shadow_classes.iter().find(|shadow| shadow.name == class);
        let Some(class) = class else {
            if self.owns_default || self.options.watch_ingress_without_class {
                return Some(Selection::Ours);
            }
            // TKE serves class-less Ingresses as `qcloud`: so do we when shadowing it.
            return shadow(QCLOUD_CLASS).map(|shadow| Selection::Shadow(shadow.profile));
        };
        let named = |list: &[String]| list.iter().any(|name| name == class);
        if self.owned.contains(class) || named(&self.options.ingress_classes) {
            Some(Selection::Ours)
        } else {
            shadow(class).map(|shadow| Selection::Shadow(shadow.profile))
        }
    }
}
