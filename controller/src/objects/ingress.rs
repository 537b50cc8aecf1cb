//! An Ingress as the stores keep it: what compile, the profiles, Events and the status writer read.
//!
//! k8s-openapi's `Ingress` is 584 B inline whatever is set: its `ObjectMeta` 360 B (15 fields,
//! most `None` once slimmed) and an `IngressSpec` with a 128 B default backend inline that few
//! Ingresses set. This one keeps the same field names and nesting for what is read (so readers
//! read it unchanged) in ~250 B. The watcher and the manifest reader still decode k8s-openapi's
//! type (kube's watcher resumes from its `ObjectMeta`); the store keeps this, converted on arrival.

use k8s_openapi::{
    api::networking::v1 as api,
    api::networking::v1::{IngressStatus, IngressTLS},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};

use super::{Annotations, IngressBackend, IngressRule, MetaNames, Named, converted};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ingress {
    pub metadata: IngressMeta,
    pub spec: Option<IngressSpec>,
    /// Compared by the status writer before it writes.
    pub status: Option<IngressStatus>,
}

/// Name and namespace; annotations (the profiles read them); creationTimestamp (compile's
/// precedence); uid (Events refer to it); resourceVersion (the status writer's replace sends it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngressMeta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub annotations: Option<Annotations>,
    pub creation_timestamp: Option<Time>,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngressSpec {
    /// Boxed: rarely set.
    pub default_backend: Option<Box<IngressBackend>>,
    pub ingress_class_name: Option<String>,
    pub rules: Option<Vec<IngressRule>>,
    pub tls: Option<Vec<IngressTLS>>,
}

impl From<&api::Ingress> for Ingress {
    /// A clone: vectors get exact capacities (serde grew them by doubling).
    fn from(ingress: &api::Ingress) -> Self {
        ingress.clone().into()
    }
}

impl From<api::Ingress> for Ingress {
    fn from(ingress: api::Ingress) -> Self {
        let api::Ingress { metadata, spec, status } = ingress;
        Ingress {
            metadata: metadata.into(),
            spec: spec.map(|spec| IngressSpec {
                default_backend: spec.default_backend.map(|backend| Box::new(backend.into())),
                ingress_class_name: spec.ingress_class_name,
                rules: spec.rules.map(converted),
                tls: spec.tls,
            }),
            status,
        }
    }
}

impl From<Ingress> for api::Ingress {
    fn from(ingress: Ingress) -> Self {
        let Ingress { metadata, spec, status } = ingress;
        api::Ingress {
            metadata: metadata.into(),
            spec: spec.map(|spec| api::IngressSpec {
                default_backend: spec.default_backend.map(|backend| (*backend).into()),
                ingress_class_name: spec.ingress_class_name,
                rules: spec.rules.map(converted),
                tls: spec.tls,
            }),
            status,
        }
    }
}

impl From<ObjectMeta> for IngressMeta {
    fn from(meta: ObjectMeta) -> Self {
        IngressMeta {
            name: meta.name,
            namespace: meta.namespace,
            annotations: meta.annotations.map(Annotations::from),
            creation_timestamp: meta.creation_timestamp,
            uid: meta.uid,
            resource_version: meta.resource_version,
        }
    }
}

impl From<IngressMeta> for ObjectMeta {
    fn from(meta: IngressMeta) -> Self {
        ObjectMeta {
            name: meta.name,
            namespace: meta.namespace,
            annotations: meta.annotations.map(Into::into),
            creation_timestamp: meta.creation_timestamp,
            uid: meta.uid,
            resource_version: meta.resource_version,
            ..ObjectMeta::default()
        }
    }
}

impl MetaNames for IngressMeta {
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl Named for Ingress {
    type Meta = IngressMeta;

    fn meta(&self) -> &IngressMeta {
        &self.metadata
    }
}
