//! IngressClass selection: which Ingresses this controller serves, and which only in shadow.

use std::{collections::BTreeSet, fmt, str::FromStr, sync::Arc};

use crate::objects::Ingress;
use k8s_openapi::api::networking::v1::IngressClass;

use super::CompileOptions;

/// The legacy way to pick a class, still common in charts.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// TKE's own class; TKE also treats an Ingress without a class as this one.
pub const QCLOUD_CLASS: &str = "qcloud";

/// ingress-nginx's default class name.
pub const NGINX_CLASS: &str = "nginx";

/// How an Ingress was selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    Ours,
    /// Ours (status written), compiled with this profile (`--class-profile NAME=PROFILE`).
    Owned(Profile),
    /// Only through `shadow_classes`: routed with this profile, but its status belongs to
    /// another controller.
    Shadow(Profile),
}

// === impl Selection ===

impl Selection {
    /// The profile that compiles this Ingress itself, if one does.
    pub fn own_profile(self) -> Option<Profile> {
        match self {
            Selection::Owned(profile) | Selection::Shadow(profile) if profile.compiles_own() => Some(profile),
            _ => None,
        }
    }
}

/// Whose semantics a shadowed class is compiled with. Ordered as the profiles compile: one
/// that compiles earlier holds a path two profiles' Ingresses claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Profile {
    /// The Ingress spec's, like our own classes.
    IngressSpec,
    /// TKE's CLB (see `crate::shadow::qcloud`).
    Qcloud,
    /// ingress-nginx (see `crate::shadow::nginx`).
    Nginx,
}

/// `--shadow-class NAME` or `NAME=PROFILE`: classes `qcloud` and `nginx` get their profiles by
/// name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowClass {
    pub name: String,
    pub profile: Profile,
}

// === impl ShadowClass ===

impl From<&str> for ShadowClass {
    /// A bare class name: `qcloud` is TKE's, `nginx` ingress-nginx's, anything else the
    /// Ingress spec's.
    fn from(name: &str) -> Self {
        let profile = match name {
            QCLOUD_CLASS => Profile::Qcloud,
            NGINX_CLASS => Profile::Nginx,
            _ => Profile::IngressSpec,
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
        let profile: Profile = profile.parse().map_err(|error| format!("{s:?}: {error}"))?;
        Ok(ShadowClass {
            name: name.to_string(),
            profile,
        })
    }
}

impl fmt::Display for ShadowClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A bare name means its default profile: write the profile whenever it differs.
        if ShadowClass::from(self.name.as_str()).profile == self.profile {
            f.write_str(&self.name)
        } else {
            write!(f, "{}={}", self.name, self.profile.as_str())
        }
    }
}

// === impl Profile ===

impl Profile {
    /// Whether the profile compiles its Ingresses itself, with a verdict per host, instead of
    /// the Ingress spec's walk.
    pub fn compiles_own(self) -> bool {
        self.own().is_some()
    }

    /// The profile's own compile; `None` for the Ingress spec's, which the compile walks itself.
    pub fn own(self) -> Option<&'static dyn crate::shadow::OwnProfile> {
        match self {
            Profile::IngressSpec => None,
            Profile::Qcloud => Some(&crate::shadow::qcloud::TkeClb),
            Profile::Nginx => Some(&crate::shadow::nginx::IngressNginx),
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Profile::IngressSpec => "ingress",
            Profile::Qcloud => "qcloud",
            Profile::Nginx => "nginx",
        }
    }
}

impl FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "qcloud" => Ok(Profile::Qcloud),
            "nginx" => Ok(Profile::Nginx),
            "ingress" => Ok(Profile::IngressSpec),
            other => Err(format!("unknown profile {other:?} (expected qcloud, nginx or ingress)")),
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
            // ingress-nginx serves them only with `--watch-ingress-without-class`
            // (internal/ingress/controller/store/store.go, `GetIngressClass`), which is off by
            // default: it is not assumed.
            return shadow(QCLOUD_CLASS).map(|shadow| Selection::Shadow(shadow.profile));
        };
        let named = |list: &[String]| list.iter().any(|name| name == class);
        if self.owned.contains(class) || named(&self.options.ingress_classes) {
            let profile = self.options.class_profiles.iter().find(|owned| owned.name == class);
            Some(match profile.map(|owned| owned.profile) {
                None | Some(Profile::IngressSpec) => Selection::Ours,
                Some(profile) => Selection::Owned(profile),
            })
        } else {
            shadow(class).map(|shadow| Selection::Shadow(shadow.profile))
        }
    }
}
