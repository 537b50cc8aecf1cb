//! The stored Ingress converts back to k8s-openapi's exactly, for every field it keeps: the
//! status writer sends the converted object to the API server.

use std::mem::size_of;

use k8s_openapi::{
    api::{core::v1::TypedLocalObjectReference, networking::v1 as api},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    jiff::Timestamp,
};
use proptest::{collection::vec, option::of, prelude::*};

use crate::objects::{ApiIngress, HTTPIngressPath, Ingress, IngressBackend};

fn text() -> impl Strategy<Value = String> {
    "[a-z0-9./*-]{0,12}"
}

/// The three path types the API server accepts, and anything a manifest may hold.
fn path_type() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Exact".to_string()),
        Just("Prefix".to_string()),
        Just("ImplementationSpecific".to_string()),
        text(),
    ]
}

fn backend() -> impl Strategy<Value = api::IngressBackend> {
    let port = (of(text()), of(any::<i32>())).prop_map(|(name, number)| api::ServiceBackendPort { name, number });
    let service = (text(), of(port)).prop_map(|(name, port)| api::IngressServiceBackend { name, port });
    let resource = (of(text()), text(), text()).prop_map(|(api_group, kind, name)| TypedLocalObjectReference {
        api_group,
        kind,
        name,
    });
    (of(service), of(resource)).prop_map(|(service, resource)| api::IngressBackend { service, resource })
}

fn rule() -> impl Strategy<Value = api::IngressRule> {
    let path = (of(text()), path_type(), backend()).prop_map(|(path, path_type, backend)| api::HTTPIngressPath {
        path,
        path_type,
        backend,
    });
    let http = vec(path, 0..4).prop_map(|paths| api::HTTPIngressRuleValue { paths });
    (of(text()), of(http)).prop_map(|(host, http)| api::IngressRule { host, http })
}

fn spec() -> impl Strategy<Value = api::IngressSpec> {
    let tls =
        (of(vec(text(), 0..3)), of(text())).prop_map(|(hosts, secret_name)| api::IngressTLS { hosts, secret_name });
    (of(backend()), of(text()), of(vec(rule(), 0..4)), of(vec(tls, 0..2))).prop_map(
        |(default_backend, ingress_class_name, rules, tls)| api::IngressSpec {
            default_backend,
            ingress_class_name,
            rules,
            tls,
        },
    )
}

/// An Ingress setting only the metadata the store keeps.
fn ingress() -> impl Strategy<Value = api::Ingress> {
    let annotations = of(proptest::collection::btree_map(text(), text(), 0..3));
    let created = of((0i64..4_000_000_000).prop_map(|second| Time(Timestamp::from_second(second).expect("in range"))));
    let meta = (of(text()), of(text()), annotations, created, of(text()), of(text()));
    (meta, of(spec())).prop_map(
        |((name, namespace, annotations, created, uid, version), spec)| api::Ingress {
            metadata: ObjectMeta {
                name,
                namespace,
                annotations,
                creation_timestamp: created,
                uid,
                resource_version: version,
                ..ObjectMeta::default()
            },
            spec,
            status: None,
        },
    )
}

proptest! {
    #[test]
    fn a_stored_ingress_converts_back_to_the_same_object(original in ingress()) {
        let stored = Ingress::from(&original);
        prop_assert_eq!(api::Ingress::from(stored), original);
    }
}

proptest! {
    /// The status writer's body: the JSON k8s-openapi writes for the same Ingress; and what the
    /// watch decodes as an `ApiIngress` stores as the k8s-openapi object does.
    #[test]
    fn an_api_ingress_is_written_and_stored_as_k8s_openapis(original in ingress()) {
        let stored = Ingress::from(&original);
        let sent = ApiIngress::from(stored.clone());
        let text = serde_json::to_string(&sent).expect("encodes");
        prop_assert_eq!(&text, &serde_json::to_string(&original).expect("encodes"));
        let decoded: ApiIngress = serde_json::from_str(&text).expect("decodes");
        prop_assert_eq!(Ingress::from(&decoded), stored);
    }
}

#[test]
fn a_stored_path_and_backend_are_half_the_api_types() {
    // k8s-openapi's path is 176 B inline (a 128 B backend holding an 80 B resource reference).
    assert!(size_of::<IngressBackend>() <= 48, "{}", size_of::<IngressBackend>());
    assert!(size_of::<HTTPIngressPath>() <= 88, "{}", size_of::<HTTPIngressPath>());
    assert!(size_of::<api::HTTPIngressPath>() >= 2 * size_of::<HTTPIngressPath>());
}
