//! An Ingress's rules, paths and backends as the stores keep them.
//!
//! k8s-openapi's `HTTPIngressPath` is ~176 B inline, most of it a 128 B `IngressBackend` whose
//! rarely set `resource` reference sits inline, plus a heap string for a path type that is one
//! of three words. These keep the same field names and nesting, so readers read them unchanged,
//! in about half: strings boxed without spare capacity, the known path types interned, the
//! `resource` reference boxed. Converted from and back to k8s-openapi's types exactly.

use std::borrow::Cow;

use k8s_openapi::api::{core::v1::TypedLocalObjectReference, networking::v1 as api};

use super::{converted, intern};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngressRule {
    pub host: Option<Box<str>>,
    pub http: Option<HTTPIngressRuleValue>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct HTTPIngressRuleValue {
    pub paths: Vec<HTTPIngressPath>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct HTTPIngressPath {
    pub path: Option<Box<str>>,
    /// `Exact`, `Prefix` or `ImplementationSpecific` take no allocation.
    pub path_type: Cow<'static, str>,
    pub backend: IngressBackend,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngressBackend {
    /// Boxed: rarely set, and 80 B inline.
    pub resource: Option<Box<TypedLocalObjectReference>>,
    pub service: Option<IngressServiceBackend>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngressServiceBackend {
    pub name: Box<str>,
    pub port: Option<ServiceBackendPort>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceBackendPort {
    pub name: Option<Box<str>>,
    pub number: Option<i32>,
}

// === from k8s-openapi ===

impl From<api::IngressRule> for IngressRule {
    fn from(rule: api::IngressRule) -> Self {
        IngressRule {
            host: rule.host.map(Into::into),
            http: rule.http.map(|http| HTTPIngressRuleValue {
                paths: converted(http.paths),
            }),
        }
    }
}

impl From<api::HTTPIngressPath> for HTTPIngressPath {
    fn from(path: api::HTTPIngressPath) -> Self {
        HTTPIngressPath {
            path: path.path.map(Into::into),
            path_type: intern(path.path_type),
            backend: path.backend.into(),
        }
    }
}

impl From<api::IngressBackend> for IngressBackend {
    fn from(backend: api::IngressBackend) -> Self {
        IngressBackend {
            resource: backend.resource.map(Box::new),
            service: backend.service.map(|service| IngressServiceBackend {
                name: service.name.into(),
                port: service.port.map(|port| ServiceBackendPort {
                    name: port.name.map(Into::into),
                    number: port.number,
                }),
            }),
        }
    }
}

// === back to k8s-openapi ===

impl From<IngressRule> for api::IngressRule {
    fn from(rule: IngressRule) -> Self {
        api::IngressRule {
            host: rule.host.map(Into::into),
            http: rule.http.map(|http| api::HTTPIngressRuleValue {
                paths: converted(http.paths),
            }),
        }
    }
}

impl From<HTTPIngressPath> for api::HTTPIngressPath {
    fn from(path: HTTPIngressPath) -> Self {
        api::HTTPIngressPath {
            path: path.path.map(Into::into),
            path_type: path.path_type.into_owned(),
            backend: path.backend.into(),
        }
    }
}

impl From<IngressBackend> for api::IngressBackend {
    fn from(backend: IngressBackend) -> Self {
        api::IngressBackend {
            resource: backend.resource.map(|resource| *resource),
            service: backend.service.map(|service| api::IngressServiceBackend {
                name: service.name.into(),
                port: service.port.map(|port| api::ServiceBackendPort {
                    name: port.name.map(Into::into),
                    number: port.number,
                }),
            }),
        }
    }
}
