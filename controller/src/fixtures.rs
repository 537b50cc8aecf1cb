//! Test builders for the cluster objects compile reads: `mk_ingress("shop", "web", rules)` and
//! friends. Each returns a plain k8s-openapi object; tests adjust fields directly.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    ByteString,
    api::{
        core::v1::{Secret, Service, ServicePort, ServiceSpec, TypedLocalObjectReference},
        discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice},
        networking::v1::{
            HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressClass, IngressClassSpec,
            IngressRule, IngressServiceBackend, IngressSpec, ServiceBackendPort,
        },
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    jiff::Timestamp,
};

use crate::objects;

/// A Service port as an Ingress backend names it: `80.into()` or `"http".into()`.
pub struct Port(ServiceBackendPort);

impl From<i32> for Port {
    fn from(number: i32) -> Self {
        Port(ServiceBackendPort {
            number: Some(number),
            name: None,
        })
    }
}

impl From<&str> for Port {
    fn from(name: &str) -> Self {
        Port(ServiceBackendPort {
            number: None,
            name: Some(name.to_string()),
        })
    }
}

/// Objects as a [`ClusterState`](crate::compile::ClusterState) holds them: shared, as the stores do.
/// Converted on the way in where the stored type differs (an Ingress).
pub fn mk_shared<T: Into<U>, U>(objects: impl IntoIterator<Item = T>) -> Vec<Arc<U>> {
    objects.into_iter().map(|object| Arc::new(object.into())).collect()
}

pub fn mk_meta(namespace: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        namespace: Some(namespace.to_string()),
        name: Some(name.to_string()),
        ..Default::default()
    }
}

/// An Ingress of class `shunt` (ours under the default options) with these rules.
pub fn mk_ingress(namespace: &str, name: &str, rules: Vec<IngressRule>) -> Ingress {
    Ingress {
        metadata: mk_meta(namespace, name),
        spec: Some(IngressSpec {
            ingress_class_name: Some("shunt".to_string()),
            rules: Some(rules),
            ..Default::default()
        }),
        status: None,
    }
}

/// Sets `spec.ingressClassName` (`None` removes it).
pub fn with_class(mut ingress: Ingress, class: Option<&str>) -> Ingress {
    ingress.spec.get_or_insert_default().ingress_class_name = class.map(str::to_string);
    ingress
}

/// Sets the legacy `kubernetes.io/ingress.class` annotation.
pub fn with_class_annotation(mut ingress: Ingress, class: &str) -> Ingress {
    let annotations = ingress.metadata.annotations.get_or_insert_default();
    annotations.insert("kubernetes.io/ingress.class".to_string(), class.to_string());
    ingress
}

/// Sets `creationTimestamp` to `seconds` after the epoch.
pub fn created_at(mut ingress: Ingress, seconds: i64) -> Ingress {
    let timestamp = Timestamp::from_second(seconds).expect("test timestamps are in range");
    ingress.metadata.creation_timestamp = Some(Time(timestamp));
    ingress
}

pub fn with_default_backend(mut ingress: Ingress, backend: IngressBackend) -> Ingress {
    ingress.spec.get_or_insert_default().default_backend = Some(backend);
    ingress
}

/// A rule; `""` means no host.
pub fn mk_rule(host: &str, paths: Vec<HTTPIngressPath>) -> IngressRule {
    IngressRule {
        host: (!host.is_empty()).then(|| host.to_string()),
        http: Some(HTTPIngressRuleValue { paths }),
    }
}

pub fn mk_path(path: &str, path_type: &str, backend: IngressBackend) -> HTTPIngressPath {
    HTTPIngressPath {
        path: Some(path.to_string()),
        path_type: path_type.to_string(),
        backend,
    }
}

/// The common case: a `Prefix` path to a Service port.
pub fn mk_prefix(path: &str, service: &str, port: impl Into<Port>) -> HTTPIngressPath {
    mk_path(path, "Prefix", mk_backend(service, port))
}

pub fn mk_backend(service: &str, port: impl Into<Port>) -> IngressBackend {
    IngressBackend {
        service: Some(IngressServiceBackend {
            name: service.to_string(),
            port: Some(port.into().0),
        }),
        resource: None,
    }
}

pub fn mk_resource_backend(kind: &str, name: &str) -> IngressBackend {
    IngressBackend {
        service: None,
        resource: Some(TypedLocalObjectReference {
            api_group: Some("storage.example.com".to_string()),
            kind: kind.to_string(),
            name: name.to_string(),
        }),
    }
}

/// A ClusterIP Service with TCP ports `(name, port)`; an empty name leaves the port unnamed.
pub fn mk_service(namespace: &str, name: &str, ports: &[(&str, i32)]) -> objects::Service {
    mk_api_service(namespace, name, ports).into()
}

/// [`mk_service`] as the API serves it, as a k8s-openapi object.
pub fn mk_api_service(namespace: &str, name: &str, ports: &[(&str, i32)]) -> Service {
    let ports = ports
        .iter()
        .map(|&(port_name, port)| ServicePort {
            name: (!port_name.is_empty()).then(|| port_name.to_string()),
            port,
            ..Default::default()
        })
        .collect();
    Service {
        metadata: mk_meta(namespace, name),
        spec: Some(ServiceSpec {
            ports: Some(ports),
            ..Default::default()
        }),
        status: None,
    }
}

/// The first port of a Service built by [`mk_service`].
pub fn first_port(service: &mut objects::Service) -> &mut objects::ServicePort {
    let ports = service.spec.as_mut().and_then(|spec| spec.ports.as_mut());
    ports
        .and_then(|ports| ports.first_mut())
        .expect("mk_service was given a port")
}

/// An EndpointSlice of `service` with ports `(name, port)` (empty name: unnamed). The address
/// type follows the first endpoint (`:` means IPv6).
pub fn mk_slice(
    namespace: &str,
    name: &str,
    service: &str,
    ports: &[(&str, i32)],
    endpoints: Vec<objects::Endpoint>,
) -> objects::EndpointSlice {
    let ipv6 = endpoints
        .first()
        .and_then(|e| e.addresses.first())
        .is_some_and(|a| a.contains(':'));
    let mut slice: objects::EndpointSlice = mk_api_slice(namespace, name, service, ports, Vec::new()).into();
    slice.address_type = if ipv6 { "IPv6" } else { "IPv4" }.into();
    slice.endpoints = endpoints;
    slice
}

/// [`mk_slice`] as the API serves it, as a k8s-openapi object.
pub fn mk_api_slice(
    namespace: &str,
    name: &str,
    service: &str,
    ports: &[(&str, i32)],
    endpoints: Vec<Endpoint>,
) -> EndpointSlice {
    let ipv6 = endpoints
        .first()
        .and_then(|e| e.addresses.first())
        .is_some_and(|a| a.contains(':'));
    let labels = BTreeMap::from([("kubernetes.io/service-name".to_string(), service.to_string())]);
    EndpointSlice {
        metadata: ObjectMeta {
            labels: Some(labels),
            ..mk_meta(namespace, name)
        },
        address_type: if ipv6 { "IPv6" } else { "IPv4" }.to_string(),
        ports: Some(
            ports
                .iter()
                .map(|&(port_name, port)| EndpointPort {
                    name: (!port_name.is_empty()).then(|| port_name.to_string()),
                    port: Some(port),
                    protocol: Some("TCP".to_string()),
                    ..Default::default()
                })
                .collect(),
        ),
        endpoints,
    }
}

/// A ready endpoint.
pub fn mk_ready(address: &str) -> objects::Endpoint {
    mk_api_ready(address).into()
}

/// [`mk_ready`] as the API serves it.
pub fn mk_api_ready(address: &str) -> Endpoint {
    mk_api_endpoint(address, Some(true), Some(true), Some(false))
}

/// An endpoint with these conditions (`None` leaves a condition unset).
pub fn mk_endpoint(
    address: &str,
    ready: Option<bool>,
    serving: Option<bool>,
    terminating: Option<bool>,
) -> objects::Endpoint {
    mk_api_endpoint(address, ready, serving, terminating).into()
}

/// [`mk_endpoint`] as the API serves it.
pub fn mk_api_endpoint(
    address: &str,
    ready: Option<bool>,
    serving: Option<bool>,
    terminating: Option<bool>,
) -> Endpoint {
    Endpoint {
        addresses: vec![address.to_string()],
        conditions: Some(EndpointConditions {
            ready,
            serving,
            terminating,
        }),
        ..Default::default()
    }
}

pub fn mk_class(name: &str, controller: &str) -> IngressClass {
    IngressClass {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        spec: Some(IngressClassSpec {
            controller: Some(controller.to_string()),
            parameters: None,
        }),
    }
}

/// An IngressClass annotated as the cluster default.
pub fn mk_default_class(name: &str, controller: &str) -> IngressClass {
    let mut class = mk_class(name, controller);
    let annotations = BTreeMap::from([(
        "ingressclass.kubernetes.io/is-default-class".to_string(),
        "true".to_string(),
    )]);
    class.metadata.annotations = Some(annotations);
    class
}

/// A `kubernetes.io/tls` Secret with a self-signed certificate for `names`, valid 2020-2040, PEM
/// in `data` as the API server returns it.
pub fn mk_tls_secret(namespace: &str, name: &str, names: &[&str]) -> Secret {
    let key = rcgen::KeyPair::generate().expect("a key");
    let mut params =
        rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("valid names");
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(2040, 1, 1);
    let cert = params.self_signed(&key).expect("a certificate");
    let data = [("tls.crt", cert.pem()), ("tls.key", key.serialize_pem())]
        .map(|(k, v)| (k.to_string(), ByteString(v.into_bytes())));
    Secret {
        metadata: mk_meta(namespace, name),
        type_: Some("kubernetes.io/tls".into()),
        data: Some(BTreeMap::from(data)),
        ..Default::default()
    }
}

/// Services `shop/web` and `shop/api` (port 80, named `http`) as YAML, for the profile fixtures.
pub const SHOP_SERVICES: &str = r#"
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: api}
spec: {ports: [{name: http, port: 80}]}
"#;
