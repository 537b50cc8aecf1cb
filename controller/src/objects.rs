//! What compile reads of Services and EndpointSlices, in a compact layout of our own.
//!
//! ```text
//! API JSON ─serde (unknown fields skipped)─▶ Service / EndpointSlice ─▶ store ─▶ ClusterState ─▶ compile
//! ```
//! k8s-openapi's types give every optional field its room whether set or not (a Service is 824 B,
//! each `Endpoint` 352 B before any string): ~39 MiB at 10,000 Services and 50,000 endpoints.
//! These types keep k8s-openapi's field names and nesting for the fields compile reads, so
//! compile's code reads them unchanged, and nothing else: managedFields, selectors, IPs, node
//! names and pod references are skipped while parsing, never allocated.
//! Their metadata is [`Meta`], name and namespace; the watcher decodes [`ApiService`] and
//! [`ApiEndpointSlice`] (`api.rs`), whose `ObjectMeta` kube requires, and the store keeps these.

use std::{borrow::Cow, fmt};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// A Service: its type and ports.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct Service {
    #[serde(default)]
    pub metadata: Meta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ServiceSpec>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ServiceSpec {
    /// `ClusterIP`, `NodePort`, `LoadBalancer` or `ExternalName`; known values take no allocation.
    #[serde(
        default,
        rename = "type",
        deserialize_with = "interned",
        skip_serializing_if = "Option::is_none"
    )]
    pub type_: Option<Cow<'static, str>>,
    #[serde(default, deserialize_with = "shrunk", skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ServicePort>>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ServicePort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Box<str>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub port: i32,
    #[serde(default, deserialize_with = "interned", skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Cow<'static, str>>,
    #[serde(
        default,
        rename = "appProtocol",
        deserialize_with = "interned",
        skip_serializing_if = "Option::is_none"
    )]
    pub app_protocol: Option<Cow<'static, str>>,
}

/// An EndpointSlice: its Service, address type, ports, and each endpoint's first address and
/// conditions. Read and written as the API's JSON (through [`WireSlice`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EndpointSlice {
    /// Without labels: the one compile reads is `service_name`.
    pub metadata: Meta,
    /// The `kubernetes.io/service-name` label. A field, not a one-entry labels map: a B-tree
    /// leaf is 544 B, ~5 MiB at 10,000 slices.
    pub service_name: Option<Box<str>>,
    pub address_type: AddressType,
    pub endpoints: Vec<Endpoint>,
    pub ports: Option<Vec<EndpointPort>>,
}

/// The label naming an EndpointSlice's Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// `addressType`: IPv4, IPv6, or (deprecated) FQDN; anything else is kept as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AddressType {
    #[default]
    IPv4,
    IPv6,
    Fqdn,
    Other(Box<str>),
}

/// One endpoint: 32 B plus its address and hints. Only the first address has defined semantics
/// (kube-proxy ignores the rest), so only it is kept.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct Endpoint {
    #[serde(default, deserialize_with = "null_as_default")]
    pub addresses: FirstAddress,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<EndpointConditions>,
    /// Who should use it: the topology-aware choice reads these. Boxed, as most endpoints have
    /// none; `nodeName` and `zone` are not kept (the hints name the same places).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Box<EndpointHints>>,
}

/// `hints`: the nodes (`forNodes`) and zones (`forZones`) whose consumers should use an
/// endpoint, as the EndpointSlice controller sets them for `trafficDistribution`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct EndpointHints {
    #[serde(default, rename = "forNodes", skip_serializing_if = "Vec::is_empty")]
    pub for_nodes: Vec<HintName>,
    #[serde(default, rename = "forZones", skip_serializing_if = "Vec::is_empty")]
    pub for_zones: Vec<HintName>,
}

/// One `forNodes` or `forZones` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct HintName {
    #[serde(default)]
    pub name: Box<str>,
}

/// The first of an endpoint's `addresses`; reads like the list's `first()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstAddress(Option<Box<str>>);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct EndpointConditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct EndpointPort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(default, deserialize_with = "interned", skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Cow<'static, str>>,
    #[serde(
        default,
        rename = "appProtocol",
        deserialize_with = "interned",
        skip_serializing_if = "Option::is_none"
    )]
    pub app_protocol: Option<Cow<'static, str>>,
}

/// Values common enough that each object sharing one static string saves an allocation.
const INTERNED: [&str; 15] = [
    "TCP",
    "UDP",
    "SCTP",
    "ClusterIP",
    "NodePort",
    "LoadBalancer",
    "ExternalName",
    "http",
    "https",
    "kubernetes.io/h2c",
    "grpc",
    "h2c",
    "Exact",
    "Prefix",
    "ImplementationSpecific",
];

fn intern(value: String) -> Cow<'static, str> {
    match INTERNED.iter().find(|known| **known == value) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(value),
    }
}

fn interned<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'static, str>>, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.map(intern))
}

/// Each item converted, without spare capacity (collecting in place would keep the source's room).
fn converted<T, U: From<T>>(items: Vec<T>) -> Vec<U> {
    let mut items: Vec<U> = items.into_iter().map(U::from).collect();
    items.shrink_to_fit();
    items
}

/// A list without spare capacity (serde grows vectors by doubling).
fn shrunk<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<Vec<T>>, D::Error> {
    let mut list = Option::<Vec<T>>::deserialize(deserializer)?;
    if let Some(list) = &mut list {
        list.shrink_to_fit();
    }
    Ok(list)
}

/// `null` reads as absent, as k8s-openapi reads it.
fn null_as_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(deserializer: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

fn null_as_default_shrunk<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    Ok(shrunk(deserializer)?.unwrap_or_default())
}

// === impl EndpointSlice ===

impl EndpointSlice {
    /// Takes the Service's name out of `metadata`'s labels and drops the other labels (compile
    /// reads none).
    pub fn from_parts(
        mut metadata: ObjectMeta,
        address_type: AddressType,
        endpoints: Vec<Endpoint>,
        ports: Option<Vec<EndpointPort>>,
    ) -> Self {
        let service_name = metadata
            .labels
            .take()
            .and_then(|mut labels| labels.remove(SERVICE_NAME_LABEL))
            .map(String::into_boxed_str);
        EndpointSlice {
            metadata: metadata.into(),
            service_name,
            address_type,
            endpoints,
            ports,
        }
    }
}

impl<'de> Deserialize<'de> for EndpointSlice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        api::ApiEndpointSlice::deserialize(deserializer).map(EndpointSlice::from)
    }
}

impl Serialize for EndpointSlice {
    /// Written back with the Service's name as its label (`shunt serve` keeps its objects as JSON).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut metadata = ObjectMeta::from(self.metadata.clone());
        metadata.labels = self
            .service_name
            .as_ref()
            .map(|service| [(SERVICE_NAME_LABEL.to_string(), service.to_string())].into());
        api::ApiEndpointSlice {
            metadata,
            address_type: self.address_type.clone(),
            endpoints: self.endpoints.clone(),
            ports: self.ports.clone(),
        }
        .serialize(serializer)
    }
}

// === impl AddressType ===

impl AddressType {
    pub fn as_str(&self) -> &str {
        match self {
            AddressType::IPv4 => "IPv4",
            AddressType::IPv6 => "IPv6",
            AddressType::Fqdn => "FQDN",
            AddressType::Other(other) => other,
        }
    }
}

impl From<&str> for AddressType {
    fn from(value: &str) -> Self {
        match value {
            "IPv4" => AddressType::IPv4,
            "IPv6" => AddressType::IPv6,
            "FQDN" => AddressType::Fqdn,
            other => AddressType::Other(other.into()),
        }
    }
}

impl<'de> Deserialize<'de> for AddressType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = AddressType;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an address type")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<AddressType, E> {
                Ok(value.into())
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl Serialize for AddressType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

// === impl FirstAddress ===

impl FirstAddress {
    pub fn first(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<S: Into<Box<str>>> FromIterator<S> for FirstAddress {
    fn from_iter<I: IntoIterator<Item = S>>(addresses: I) -> Self {
        FirstAddress(addresses.into_iter().next().map(Into::into))
    }
}

impl<'de> Deserialize<'de> for FirstAddress {
    /// Reads the whole list (a hostile one is bounded by the response size) and keeps the first.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = FirstAddress;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a list of addresses")
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<FirstAddress, A::Error> {
                let first = seq.next_element::<Box<str>>()?;
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(FirstAddress(first))
            }
        }
        deserializer.deserialize_seq(Visitor)
    }
}

impl Serialize for FirstAddress {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

mod annotations;
mod api;
mod ingress;
mod meta;
mod namespace;
mod resource;
mod rules;
mod tke;
mod wire_meta;
pub use annotations::Annotations;
pub use api::{ApiEndpointSlice, ApiIngress, ApiService};
pub use ingress::{Ingress, IngressMeta, IngressSpec};
pub use meta::{Meta, MetaNames, Named};
pub use namespace::Namespace;
pub(crate) use resource::resource;
pub use rules::{
    HTTPIngressPath, HTTPIngressRuleValue, IngressBackend, IngressRule, IngressServiceBackend, ServiceBackendPort,
};
pub use tke::TkeServiceConfig;
pub use wire_meta::{LAST_APPLIED, decode_meta};

// === conversions from k8s-openapi (fixtures, tests, tools that list with k8s-openapi) ===

mod convert;

#[cfg(test)]
mod tests;
