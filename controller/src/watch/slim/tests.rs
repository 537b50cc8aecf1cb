//! Slimming keeps every field compile reads: a slimmed state compiles to the same table.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    ByteString,
    api::{
        core::v1::{LoadBalancerIngress, LoadBalancerStatus, ObjectReference, Secret, ServiceStatus},
        networking::v1::{IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus},
    },
    apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry,
};

use super::*;
use crate::{
    compile::{ClusterState, CompileOptions, compile},
    fixtures::*,
};

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

fn mk_state() -> ClusterState {
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
    let mut service = mk_service("shop", "web", &[("http", 80)]);
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
    let mut endpoint = mk_ready("10.1.0.5");
    endpoint.target_ref = Some(ObjectReference {
        kind: Some("Pod".into()),
        name: Some("web-abcde".into()),
        ..Default::default()
    });
    endpoint.node_name = Some("node-1".into());
    endpoint.zone = Some("zone-a".into());
    let slice = mk_slice(
        "shop",
        "web-1",
        "web",
        &[("http", 8080)],
        vec![endpoint, mk_ready("10.1.0.6")],
    );
    let secret = Secret {
        metadata: mk_meta("shop", "tls"),
        type_: Some("kubernetes.io/tls".into()),
        data: Some(BTreeMap::from([
            ("tls.crt".to_string(), ByteString(b"chain".to_vec())),
            ("tls.key".to_string(), ByteString(b"key".to_vec())),
            ("ca.crt".to_string(), ByteString(b"ca".to_vec())),
        ])),
        ..Default::default()
    };
    let mut state = ClusterState {
        ingresses: mk_shared([ingress]),
        ingress_classes: mk_shared([mk_class("shunt", "shunt.dev/ingress-controller")]),
        services: mk_shared([service]),
        endpoint_slices: mk_shared([slice]),
        secrets: mk_shared([secret]),
    };
    state
        .ingresses
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    state
        .ingress_classes
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    state
        .services
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    state
        .endpoint_slices
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    state
        .secrets
        .iter_mut()
        .for_each(|o| mk_bookkeeping(&mut Arc::make_mut(o).metadata));
    state
}

fn slimmed(mut state: ClusterState) -> ClusterState {
    state.ingresses.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.ingress_classes.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.services.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.endpoint_slices.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state.secrets.iter_mut().for_each(|o| Arc::make_mut(o).slim());
    state
}

#[test]
fn a_slimmed_state_compiles_to_the_same_table_and_diagnostics() {
    let options = CompileOptions::default();
    let full = compile(&mk_state(), &options);
    assert!(!full.table.hosts.is_empty(), "the fixture routes something: {full:?}");
    assert_eq!(compile(&slimmed(mk_state()), &options), full);
}

#[test]
fn bookkeeping_leaves_every_kind_and_other_annotations_stay() {
    let state = slimmed(mk_state());
    let metas = state
        .ingresses
        .iter()
        .map(|o| &o.metadata)
        .chain(state.ingress_classes.iter().map(|o| &o.metadata))
        .chain(state.services.iter().map(|o| &o.metadata))
        .chain(state.endpoint_slices.iter().map(|o| &o.metadata))
        .chain(state.secrets.iter().map(|o| &o.metadata));
    for metadata in metas {
        assert_eq!(metadata.managed_fields, None, "{metadata:?}");
        let annotations = metadata.annotations.clone().unwrap_or_default();
        assert!(!annotations.contains_key(LAST_APPLIED), "{metadata:?}");
    }
    let ingress = &state.ingresses[0];
    assert!(ingress.metadata.annotations.as_ref().is_some_and(|a| a.len() == 1));
    assert!(ingress.status.is_some(), "the status writer compares it");
    assert_eq!(
        state.endpoint_slices[0].metadata.labels.as_ref().map(BTreeMap::len),
        Some(1)
    );
}

#[test]
fn fields_compile_never_reads_leave() {
    let state = slimmed(mk_state());
    let service = &state.services[0];
    assert_eq!(service.status, None);
    let spec = service.spec.as_ref().expect("spec kept");
    assert_eq!((spec.selector.as_ref(), spec.cluster_ip.as_ref()), (None, None));
    assert_eq!(spec.ports.as_ref().map(Vec::len), Some(1));
    let endpoint = &state.endpoint_slices[0].endpoints[0];
    assert_eq!(
        (&endpoint.target_ref, &endpoint.node_name, &endpoint.zone),
        (&None, &None, &None)
    );
    assert_eq!(endpoint.addresses, vec!["10.1.0.5".to_string()]);
    let keys: Vec<_> = state.secrets[0]
        .data
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, vec!["tls.crt", "tls.key"]);
}
