//! Slimming keeps every field compile reads: a slimmed state compiles to the same table.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    ByteString,
    api::{
        core::v1::{self, LoadBalancerIngress, LoadBalancerStatus, ObjectReference, Secret, ServiceStatus},
        discovery::v1 as discovery,
        networking::v1::{Ingress, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus},
    },
    apimachinery::pkg::{apis::meta::v1::ManagedFieldsEntry, util::intstr::IntOrString},
};

use super::*;
use crate::{
    compile::{ClusterState, CompileOptions, compile},
    fixtures::*,
    objects,
};

/// A cluster as the API serves it: Ingresses, Services and EndpointSlices as k8s-openapi objects.
#[derive(Debug)]
struct Full {
    state: ClusterState,
    ingresses: Vec<Ingress>,
    services: Vec<v1::Service>,
    slices: Vec<discovery::EndpointSlice>,
}

/// What the watchers store: every kind slimmed, Ingresses, Services and EndpointSlices decoded
/// from the API's JSON into the watched types, slimmed, and stored in our compact ones.
fn watched(full: &Full) -> ClusterState {
    fn decoded<T, W, K>(object: &T) -> Arc<K>
    where
        T: serde::Serialize,
        W: serde::de::DeserializeOwned + Slim + Clone + Into<K>,
        K: Slim,
    {
        let json = serde_json::to_string(object).expect("k8s-openapi objects serialize");
        let mut watched: W = serde_json::from_str(&json).expect("our types read what the API writes");
        watched.slim();
        Arc::new(stored(&watched))
    }
    let mut state = slimmed(full.state.clone());
    let slim_ingress = |ingress: &Ingress| {
        let json = serde_json::to_string(ingress).expect("k8s-openapi objects serialize");
        let mut watched: ApiIngress = serde_json::from_str(&json).expect("our type reads what the API writes");
        watched.slim();
        Arc::new(objects::Ingress::from(&watched))
    };
    state.ingresses = full.ingresses.iter().map(slim_ingress).collect();
    state.services = full.services.iter().map(decoded::<_, ApiService, _>).collect();
    state.endpoint_slices = full.slices.iter().map(decoded::<_, ApiEndpointSlice, _>).collect();
    state
}

/// The same cluster converted field by field, nothing slimmed.
fn converted(full: &Full) -> ClusterState {
    let mut state = full.state.clone();
    state.ingresses = mk_shared(full.ingresses.iter().cloned());
    state.services = mk_shared(full.services.iter().cloned().map(objects::Service::from));
    state.endpoint_slices = mk_shared(full.slices.iter().cloned().map(objects::EndpointSlice::from));
    state
}

/// What the API server and kubectl add to every object.
fn mk_bookkeeping(metadata: &mut ObjectMeta) {
    metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("kubectl-client-side-apply".into()),
        operation: Some("Update".into()),
        ..Default::default()
    }]);
    let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(LAST_APPLIED.into(), r#"{"apiVersion":"v1","kind":"..."}"#.into());
}

fn mk_state() -> Full {
    let mut ingress = mk_ingress(
        "shop",
        "web",
        vec![mk_rule("shop.example.com", vec![mk_prefix("/", "web", 80)])],
    );
    ingress.metadata.annotations = Some(BTreeMap::from([(
        "nginx.ingress.kubernetes.io/ssl-redirect".to_string(),
        "false".to_string(),
    )]));
    ingress.status = Some(IngressStatus {
        load_balancer: Some(IngressLoadBalancerStatus {
            ingress: Some(vec![IngressLoadBalancerIngress {
                ip: Some("10.0.0.1".into()),
                ..Default::default()
            }]),
        }),
    });
    let mut service = mk_api_service("shop", "web", &[("http", 80)]);
    let spec = service.spec.as_mut().expect("mk_service has a spec");
    spec.selector = Some(BTreeMap::from([("app".to_string(), "web".to_string())]));
    spec.cluster_ip = Some("10.96.0.10".into());
    service.status = Some(ServiceStatus {
        load_balancer: Some(LoadBalancerStatus {
            ingress: Some(vec![LoadBalancerIngress {
                ip: Some("1.2.3.4".into()),
                ..Default::default()
            }]),
        }),
        ..Default::default()
    });
    let mut slice = mk_full_slice();
    let secret = Secret {
        metadata: mk_meta("shop", "tls"),
        type_: Some("kubernetes.io/tls".into()),
        data: Some(BTreeMap::from([
            ("tls.crt".to_string(), ByteString(b"chain".to_vec())),
            ("tls.key".to_string(), ByteString(b"key".to_vec())),
            ("ca.crt".to_string(), ByteString(b"ca".to_vec())),
            ("password".to_string(), ByteString(b"hunter2".to_vec())),
        ])),
        ..Default::default()
    };
    mk_bookkeeping(&mut ingress.metadata);
    mk_bookkeeping(&mut service.metadata);
    mk_bookkeeping(&mut slice.metadata);
    let mut state = ClusterState {
        ingress_classes: mk_shared([mk_class("shunt", "shunt.dev/ingress-controller")]),
        secrets: mk_shared([secret]),
        ..Default::default()
    };
    state
        .ingress_classes
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    state
        .secrets
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    Full {
        state,
        ingresses: vec![ingress],
        services: vec![service],
        slices: vec![slice],
    }
}

/// A slice with every field an endpoint can carry that compile does not read.
fn mk_full_slice() -> k8s_openapi::api::discovery::v1::EndpointSlice {
    let mut endpoint = mk_api_ready("10.1.0.5");
    endpoint.addresses.push("10.1.0.99".into());
    endpoint.target_ref = Some(ObjectReference {
        kind: Some("Pod".into()),
        name: Some("web-abcde".into()),
        ..Default::default()
    });
    endpoint.node_name = Some("node-1".into());
    endpoint.zone = Some("zone-a".into());
    mk_api_slice(
        "shop",
        "web-1",
        "web",
        &[("http", 8080)],
        vec![endpoint, mk_api_ready("10.1.0.6")],
    )
}

fn slimmed(mut state: ClusterState) -> ClusterState {
    state.ingress_classes.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.services.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.endpoint_slices.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.secrets.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state
}

#[test]
fn a_slimmed_state_compiles_to_the_same_table_and_diagnostics() {
    let options = CompileOptions::default();
    let full = compile(&converted(&mk_state()), &options);
    assert!(!full.table.hosts.is_empty(), "the fixture routes something: {full:?}");
    assert_eq!(compile(&watched(&mk_state()), &options), full);
}

#[test]
fn bookkeeping_leaves_every_kind_and_other_annotations_stay() {
    let state = watched(&mk_state());
    // A stored Ingress keeps no managedFields field at all.
    let ingress_annotations = state.ingresses[0].metadata.annotations.clone().unwrap_or_default();
    assert!(
        !ingress_annotations.contains_key(LAST_APPLIED),
        "{ingress_annotations:?}"
    );
    let metas = (state.ingress_classes.iter().map(|o| &o.metadata)).chain(state.secrets.iter().map(|o| &o.metadata));
    for metadata in metas {
        assert_eq!(metadata.managed_fields, None, "{metadata:?}");
        let annotations = metadata.annotations.clone().unwrap_or_default();
        assert!(!annotations.contains_key(LAST_APPLIED), "{metadata:?}");
    }
    // Services and slices keep no managedFields field at all; no LoadBalancer, no annotation.
    assert_eq!(state.services[0].metadata.annotations, None);
    let ingress = &state.ingresses[0];
    assert!(ingress.metadata.annotations.as_ref().is_some_and(|a| a.len() == 1));
    assert!(ingress.status.is_some(), "the status writer compares it");
    let slice = &state.endpoint_slices[0];
    assert!(slice.service_name.is_some(), "compile reads it");
    assert_eq!(slice.metadata.annotations, None, "{slice:?}");
}

#[test]
fn fields_compile_never_reads_leave() {
    let state = watched(&mk_state());
    let service = &state.services[0];
    let spec = service.spec.as_ref().expect("spec kept");
    assert_eq!(spec.ports.as_ref().map(Vec::len), Some(1));
    let endpoint = &state.endpoint_slices[0].endpoints[0];
    assert_eq!(endpoint.addresses.first(), Some("10.1.0.5"));
    let keys: Vec<_> = state.secrets[0]
        .data
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    // `ca.crt` stays: ingress-nginx's `proxy-ssl-secret` reads it.
    assert_eq!(keys, vec!["ca.crt", "tls.crt", "tls.key"]);
}

/// Generated clusters: a few names so Ingresses, Services and slices refer to each other, and
/// every field slimming drops filled in with something a compile could trip over.
mod generated {
    use k8s_openapi::api::{
        core::v1::{Service, ServicePort},
        discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice},
        networking::v1::{Ingress, IngressTLS},
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use proptest::{option, prelude::*, sample::select};

    use super::*;

    /// Weighted towards one namespace, IPv4 and matching ports, so most cases route something.
    const NAMESPACES: [&str; 3] = ["shop", "shop", "blog"];
    const SERVICES: [&str; 2] = ["web", "api"];

    /// Labels, annotations, finalizers, owners and a uid, as controllers and kubectl leave them.
    fn dress(metadata: &mut ObjectMeta, junk: bool) {
        mk_bookkeeping(metadata);
        if !junk {
            return;
        }
        let labels = metadata.labels.get_or_insert_with(BTreeMap::new);
        labels.insert("app.kubernetes.io/name".into(), "web".into());
        let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert("example.com/owner".into(), "team-a".into());
        metadata.finalizers = Some(vec!["example.com/cleanup".into()]);
        metadata.generate_name = Some("web-".into());
        metadata.uid = Some("0f6e7f9a".into());
        metadata.owner_references = Some(vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "web".into(),
            uid: "1a2b".into(),
            ..Default::default()
        }]);
    }

    fn ingress() -> impl Strategy<Value = Ingress> {
        // A number, or `None` for the port named "http".
        let backend_port = option::of(select(vec![80, 8080, 0]));
        let annotation = option::of(select(vec![
            ("nginx.ingress.kubernetes.io/ssl-redirect", "false"),
            ("nginx.ingress.kubernetes.io/backend-protocol", "GRPC"),
            ("shunt.dev/backend-protocol", "h2c"),
        ]));
        (
            (select(NAMESPACES.to_vec()), 0..3usize, select(SERVICES.to_vec())),
            (
                select(vec!["a.example.com", "b.example.com", ""]),
                select(vec!["/", "/api"]),
            ),
            (select(vec!["Prefix", "Exact"]), backend_port, annotation),
            (any::<bool>(), any::<bool>(), 0..3i64),
        )
            .prop_map(
                |((namespace, index, service), (host, path), (path_type, port, annotation), (tls, junk, created))| {
                    let backend = match port {
                        Some(number) => mk_backend(service, number),
                        None => mk_backend(service, "http"),
                    };
                    let rule = mk_rule(host, vec![mk_path(path, path_type, backend)]);
                    let mut ingress = created_at(mk_ingress(namespace, &format!("ing-{index}"), vec![rule]), created);
                    if let Some((key, value)) = annotation {
                        let annotations = ingress.metadata.annotations.get_or_insert_with(BTreeMap::new);
                        annotations.insert(key.into(), value.into());
                    }
                    if tls {
                        ingress.spec.get_or_insert_default().tls = Some(vec![IngressTLS {
                            hosts: Some(vec![host.to_string()]),
                            secret_name: Some("tls".into()),
                        }]);
                    }
                    dress(&mut ingress.metadata, junk);
                    ingress
                },
            )
    }

    fn service_port() -> impl Strategy<Value = ServicePort> {
        (
            select(vec!["http", ""]),
            select(vec![80, 8080]),
            option::of(select(vec!["TCP", "UDP"])),
            option::of(select(vec!["kubernetes.io/h2c", "https", "http"])),
            any::<bool>(),
        )
            .prop_map(|(name, port, protocol, app_protocol, extras)| ServicePort {
                name: (!name.is_empty()).then(|| name.to_string()),
                port,
                protocol: protocol.map(str::to_string),
                app_protocol: app_protocol.map(str::to_string),
                node_port: extras.then_some(30080),
                target_port: extras.then(|| IntOrString::String("http".into())),
            })
    }

    fn service() -> impl Strategy<Value = Service> {
        (
            (select(NAMESPACES.to_vec()), select(SERVICES.to_vec())),
            option::of(select(vec!["ClusterIP", "ExternalName", "NodePort"])),
            prop::collection::vec(service_port(), 1..3),
            any::<bool>(),
        )
            .prop_map(|((namespace, name), type_, ports, junk)| {
                let mut service = mk_api_service(namespace, name, &[]);
                let spec = service.spec.get_or_insert_default();
                spec.type_ = type_.map(str::to_string);
                spec.ports = Some(ports);
                spec.external_name = Some("elsewhere.example.com".into());
                spec.selector = Some(BTreeMap::from([("app".to_string(), name.to_string())]));
                spec.cluster_ip = Some("10.96.0.10".into());
                dress(&mut service.metadata, junk);
                service
            })
    }

    fn endpoint() -> impl Strategy<Value = Endpoint> {
        let address = select(vec!["10.1.0.1", "10.1.0.2", "10.1.0.3", "fd00::1", "not-an-ip"]);
        (
            prop::collection::vec(address, 1..3),
            option::of((
                option::of(any::<bool>()),
                option::of(any::<bool>()),
                option::of(any::<bool>()),
            )),
            any::<bool>(),
        )
            .prop_map(|(addresses, conditions, extras)| Endpoint {
                addresses: addresses.into_iter().map(str::to_string).collect(),
                conditions: conditions.map(|(ready, serving, terminating)| EndpointConditions {
                    ready,
                    serving,
                    terminating,
                }),
                hostname: extras.then(|| "web-0".into()),
                node_name: extras.then(|| "node-1".into()),
                zone: extras.then(|| "zone-a".into()),
                target_ref: extras.then(|| ObjectReference {
                    kind: Some("Pod".into()),
                    name: Some("web-0".into()),
                    ..Default::default()
                }),
                ..Default::default()
            })
    }

    fn slice() -> impl Strategy<Value = EndpointSlice> {
        let port = (
            select(vec!["http", ""]),
            option::of(select(vec![8080, 8080, 0])),
            option::of(select(vec!["h2c", "https"])),
        )
            .prop_map(|(name, port, app_protocol)| EndpointPort {
                name: (!name.is_empty()).then(|| name.to_string()),
                port,
                protocol: Some("TCP".into()),
                app_protocol: app_protocol.map(str::to_string),
            });
        (
            (select(NAMESPACES.to_vec()), select(SERVICES.to_vec()), 0..2usize),
            select(vec!["IPv4", "IPv4", "IPv4", "IPv6", "FQDN"]),
            prop::collection::vec(port, 1..3),
            prop::collection::vec(endpoint(), 1..5),
            any::<bool>(),
        )
            .prop_map(|((namespace, service, index), address_type, ports, endpoints, junk)| {
                let mut slice = mk_api_slice(namespace, &format!("{service}-{index}"), service, &[], endpoints);
                slice.address_type = address_type.to_string();
                slice.ports = Some(ports);
                dress(&mut slice.metadata, junk);
                slice
            })
    }

    fn secret() -> impl Strategy<Value = Secret> {
        (select(NAMESPACES.to_vec()), any::<bool>()).prop_map(|(namespace, junk)| {
            let mut secret = Secret {
                metadata: mk_meta(namespace, "tls"),
                type_: Some("kubernetes.io/tls".into()),
                data: Some(BTreeMap::from([
                    ("tls.crt".to_string(), ByteString(b"not a certificate".to_vec())),
                    ("tls.key".to_string(), ByteString(b"not a key".to_vec())),
                    ("ca.crt".to_string(), ByteString(b"ca".to_vec())),
                ])),
                immutable: Some(true),
                ..Default::default()
            };
            dress(&mut secret.metadata, junk);
            secret
        })
    }

    fn state() -> impl Strategy<Value = Full> {
        (
            prop::collection::vec(ingress(), 1..5),
            prop::collection::vec(service(), 1..4),
            prop::collection::vec(slice(), 1..4),
            prop::collection::vec(secret(), 0..2),
            any::<bool>(),
        )
            .prop_map(|(ingresses, services, slices, secrets, junk)| {
                let mut class = mk_class("shunt", "shunt.dev/ingress-controller");
                dress(&mut class.metadata, junk);
                let state = ClusterState {
                    ingress_classes: mk_shared([class]),
                    secrets: mk_shared(secrets),
                    ..Default::default()
                };
                Full {
                    state,
                    ingresses,
                    services,
                    slices,
                }
            })
    }

    proptest! {
        #[test]
        /// Watched: JSON decoded into our Service and EndpointSlice types, every kind slimmed;
        /// against the full objects, converted field by field.
        fn any_watched_cluster_compiles_to_what_the_full_one_does(full in state()) {
            let options = CompileOptions::default();
            let expected = compile(&converted(&full), &options);
            prop_assert_eq!(compile(&watched(&full), &options), expected);
        }
    }
}
