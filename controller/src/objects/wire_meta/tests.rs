use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{LAST_APPLIED, decode_meta};

#[derive(Deserialize)]
struct Wrapped {
    #[serde(default, deserialize_with = "decode_meta")]
    metadata: ObjectMeta,
}

fn decoded(object: Value) -> ObjectMeta {
    serde_json::from_value::<Wrapped>(object).expect("decodes").metadata
}

/// What k8s-openapi decodes, less what `decode_meta` skips: the fields no reader uses.
fn kept(mut meta: ObjectMeta) -> ObjectMeta {
    meta.managed_fields = None;
    meta.owner_references = None;
    meta.finalizers = None;
    meta.generate_name = None;
    meta.self_link = None;
    meta.deletion_grace_period_seconds = None;
    if let Some(annotations) = &mut meta.annotations {
        annotations.remove(LAST_APPLIED);
    }
    meta
}

#[test]
fn managed_fields_owners_finalizers_and_the_last_applied_copy_are_skipped() {
    let metadata = json!({
        "name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42", "generation": 3,
        "creationTimestamp": "2026-01-02T03:04:05Z",
        "annotations": {LAST_APPLIED: "{\"kind\":\"Ingress\"}", "nginx.ingress.kubernetes.io/rewrite-target": "/"},
        "labels": {"app": "web"},
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:spec": {"f:rules": {}}}}],
        "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "web", "uid": "u-2"}],
        "finalizers": ["example.com/keep"], "generateName": "web-", "selfLink": "/x",
    });
    let meta = decoded(json!({ "metadata": metadata }));
    assert_eq!(meta.name.as_deref(), Some("web"));
    assert_eq!(meta.resource_version.as_deref(), Some("42"));
    assert_eq!(meta.generation, Some(3));
    assert!(meta.creation_timestamp.is_some());
    let annotations = meta.annotations.expect("annotations");
    assert_eq!(
        annotations.keys().collect::<Vec<_>>(),
        ["nginx.ingress.kubernetes.io/rewrite-target"]
    );
    assert_eq!(meta.labels.expect("labels")["app"], "web");
    assert_eq!(meta.managed_fields, None);
    assert_eq!(meta.owner_references, None);
    assert_eq!(meta.finalizers, None);
}

#[test]
fn absent_or_null_metadata_and_annotations_decode_as_unset() {
    assert_eq!(decoded(json!({})), ObjectMeta::default());
    assert_eq!(decoded(json!({"metadata": null})), ObjectMeta::default());
    let meta = decoded(json!({"metadata": {"name": "a", "annotations": null}}));
    assert_eq!((meta.name.as_deref(), meta.annotations), (Some("a"), None));
}

#[test]
fn a_malformed_annotation_value_is_an_error_not_a_skip() {
    let object = json!({"metadata": {"annotations": {"a": 1}}});
    assert!(serde_json::from_value::<Wrapped>(object).is_err());
}

fn annotations() -> impl Strategy<Value = Option<BTreeMap<String, String>>> {
    let key = prop_oneof![Just(LAST_APPLIED.to_string()), "[a-z./-]{1,20}"];
    proptest::option::of(proptest::collection::btree_map(key, ".{0,12}", 0..4))
}

fn owner(name: String) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Service".into(),
        name,
        uid: "u".into(),
        ..OwnerReference::default()
    }
}

proptest! {
    /// Whatever is set, `decode_meta` gives what k8s-openapi decodes less the skipped fields.
    #[test]
    fn decode_meta_is_k8s_openapis_decode_less_what_no_reader_uses(
        name in proptest::option::of("[a-z]{1,8}"),
        namespace in proptest::option::of("[a-z]{1,8}"),
        uid in proptest::option::of("[a-f0-9-]{1,12}"),
        resource_version in proptest::option::of("[0-9]{1,6}"),
        generation in proptest::option::of(0i64..1000),
        grace in proptest::option::of(0i64..100),
        annotations in annotations(),
        labels in proptest::option::of(proptest::collection::btree_map("[a-z]{1,6}", "[a-z]{0,6}", 0..3)),
        owners in proptest::option::of(proptest::collection::vec("[a-z]{1,6}", 0..3)),
        finalizers in proptest::option::of(proptest::collection::vec("[a-z./]{1,10}", 0..3)),
        generate_name in proptest::option::of("[a-z]{1,6}-"),
    ) {
        let meta = ObjectMeta {
            name, namespace, uid, resource_version, generation, annotations, labels,
            deletion_grace_period_seconds: grace,
            owner_references: owners.map(|names| names.into_iter().map(owner).collect()),
            finalizers,
            generate_name,
            ..ObjectMeta::default()
        };
        let json = json!({ "metadata": serde_json::to_value(&meta).expect("encodes") });
        let full: ObjectMeta = serde_json::from_value(json["metadata"].clone()).expect("decodes");
        prop_assert_eq!(decoded(json), kept(full));
    }
}
