//! Real objects as `kubectl get -o json` shows them decode into what compile reads; the rest is
//! skipped. `watch/slim/tests.rs` compiles generated clusters decoded this way and converted.

use k8s_openapi::api::{core::v1, discovery::v1 as discovery};

use proptest::prelude::*;

use super::*;

mod ingress;

/// A Service as the API server returns it: managedFields, last-applied copy, status, and
/// fields compile never reads.
const SERVICE: &str = r#"{
  "apiVersion": "v1",
  "kind": "Service",
  "metadata": {
    "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\"}\n"},
    "creationTimestamp": "2026-11-20T10:00:00Z",
    "labels": {"app.kubernetes.io/name": "web"},
    "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:ports": {}}},
                       "manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-20T10:00:00Z"}],
    "name": "web",
    "namespace": "shop",
    "resourceVersion": "4711",
    "uid": "0f6e7f9a-1111-2222-3333-444455556666"
  },
  "spec": {
    "clusterIP": "10.96.12.34",
    "clusterIPs": ["10.96.12.34"],
    "internalTrafficPolicy": "Cluster",
    "ipFamilies": ["IPv4"],
    "ipFamilyPolicy": "SingleStack",
    "ports": [
      {"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http", "appProtocol": "kubernetes.io/h2c"},
      {"name": "metrics", "port": 9100, "protocol": "UDP", "targetPort": 9100, "nodePort": 30100}
    ],
    "selector": {"app": "web"},
    "sessionAffinity": "None",
    "type": "ClusterIP",
    "someFutureField": {"nested": [1, 2, 3]}
  },
  "status": {"loadBalancer": {}}
}"#;

const SLICE: &str = r#"{
  "addressType": "IPv4",
  "apiVersion": "discovery.k8s.io/v1",
  "endpoints": [
    {"addresses": ["10.1.0.5", "10.1.0.99"], "conditions": {"ready": true, "serving": true, "terminating": false},
     "nodeName": "node-1", "targetRef": {"kind": "Pod", "name": "web-abcde", "namespace": "shop", "uid": "1a2b"},
     "zone": "zone-a", "hints": {"forZones": [{"name": "zone-a"}]}},
    {"addresses": ["10.1.0.6"], "conditions": {"ready": false, "serving": true, "terminating": true}},
    {"addresses": [], "conditions": null}
  ],
  "kind": "EndpointSlice",
  "metadata": {
    "generateName": "web-",
    "labels": {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
               "kubernetes.io/service-name": "web"},
    "managedFields": [{"apiVersion": "discovery.k8s.io/v1", "manager": "kube-controller-manager", "operation": "Update"}],
    "name": "web-x7k2p",
    "namespace": "shop",
    "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "web", "uid": "0f6e", "controller": true,
                         "blockOwnerDeletion": true}],
    "resourceVersion": "4712"
  },
  "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "appProtocol": "http"}]
}"#;

#[test]
fn a_real_service_decodes_to_its_type_and_ports() {
    let watched: ApiService = serde_json::from_str(SERVICE).expect("decodes");
    assert_eq!(
        watched.metadata.resource_version.as_deref(),
        Some("4711"),
        "the watcher resumes from it"
    );
    let annotations = watched.metadata.annotations.clone().expect("has annotations");
    assert!(
        !annotations.contains_key(LAST_APPLIED),
        "skipped as the watcher decodes it"
    );
    let service: Service = serde_json::from_str(SERVICE).expect("decodes");
    let mut converted: Service = watched.into();
    converted.metadata.annotations = service.metadata.annotations.clone();
    assert_eq!(service, converted, "the same, decoded or converted");
    assert_eq!(service.metadata.name.as_deref(), Some("web"));
    let spec = service.spec.as_ref().expect("has a spec");
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert!(
        matches!(spec.type_, Some(Cow::Borrowed(_))),
        "known values are not allocated"
    );
    let ports = spec.ports.as_ref().expect("has ports");
    assert_eq!(
        ports[0],
        ServicePort {
            name: Some("http".into()),
            port: 80,
            protocol: Some("TCP".into()),
            app_protocol: Some("kubernetes.io/h2c".into()),
        }
    );
    assert_eq!((ports[1].port, ports[1].protocol.as_deref()), (9100, Some("UDP")));
}

#[test]
fn a_real_slice_keeps_the_first_address_and_conditions_of_each_endpoint() {
    let slice: EndpointSlice = serde_json::from_str(SLICE).expect("decodes");
    assert_eq!(slice.address_type, AddressType::IPv4);
    let firsts: Vec<_> = slice.endpoints.iter().map(|e| e.addresses.first()).collect();
    assert_eq!(firsts, vec![Some("10.1.0.5"), Some("10.1.0.6"), None]);
    let conditions = slice.endpoints[1].conditions.expect("has conditions");
    assert_eq!(
        (conditions.ready, conditions.serving, conditions.terminating),
        (Some(false), Some(true), Some(true))
    );
    assert_eq!(slice.endpoints[2].conditions, None);
    assert_eq!(slice.service_name.as_deref(), Some("web"));
    let port = &slice.ports.as_ref().expect("has ports")[0];
    assert_eq!((port.port, port.app_protocol.as_deref()), (Some(8080), Some("http")));
}

#[test]
fn decoding_json_equals_converting_the_k8s_openapi_object() {
    let service: v1::Service = serde_json::from_str(SERVICE).expect("k8s-openapi decodes");
    assert_eq!(
        serde_json::from_str::<Service>(SERVICE).expect("decodes"),
        service.into()
    );
    let slice: discovery::EndpointSlice = serde_json::from_str(SLICE).expect("k8s-openapi decodes");
    assert_eq!(
        serde_json::from_str::<EndpointSlice>(SLICE).expect("decodes"),
        slice.into()
    );
}

#[test]
fn our_json_decodes_back_to_the_same_objects() {
    // `shunt serve` keeps manifest objects as JSON between polls.
    let service: Service = serde_json::from_str(SERVICE).expect("decodes");
    let again = serde_json::to_string(&service).expect("encodes");
    assert_eq!(serde_json::from_str::<Service>(&again).expect("decodes again"), service);
    let slice: EndpointSlice = serde_json::from_str(SLICE).expect("decodes");
    let again = serde_json::to_string(&slice).expect("encodes");
    assert_eq!(
        serde_json::from_str::<EndpointSlice>(&again).expect("decodes again"),
        slice
    );
}

#[test]
fn nulls_read_as_absent_and_unknown_address_types_are_kept() {
    let slice: EndpointSlice =
        serde_json::from_str(r#"{"addressType": "Carrier-Pigeon", "endpoints": null, "ports": null}"#)
            .expect("decodes");
    assert_eq!(slice.address_type.as_str(), "Carrier-Pigeon");
    assert!(slice.endpoints.is_empty());
    assert_eq!(slice.ports, None);
    let fqdn: EndpointSlice = serde_json::from_str(r#"{"addressType": "FQDN"}"#).expect("decodes");
    assert_eq!(fqdn.address_type.as_str(), "FQDN");
}

#[test]
fn malformed_objects_are_errors_not_panics() {
    for json in [
        r#"{"spec": {"ports": [{"port": "eighty"}]}}"#,
        r#"{"spec": {"type": 7}}"#,
        r#"{"spec": {"ports": {"name": "http"}}}"#,
    ] {
        assert!(serde_json::from_str::<Service>(json).is_err(), "{json}");
    }
    for json in [
        r#"{"endpoints": [{"addresses": "10.0.0.1"}]}"#,
        r#"{"endpoints": [{"addresses": [1]}]}"#,
        r#"{"addressType": ["IPv4"]}"#,
    ] {
        assert!(serde_json::from_str::<EndpointSlice>(json).is_err(), "{json}");
    }
}

proptest! {
    /// The Service's name moves from the labels to a field and back: decoding the API's JSON,
    /// converting k8s-openapi's object and decoding our own JSON all give the same slice.
    #[test]
    fn a_slice_keeps_its_service_name_whatever_its_other_labels(
        service in proptest::option::of("[a-z][a-z0-9-]{0,12}"),
        others in proptest::collection::btree_map("[a-z.]{1,8}/[a-z]{1,8}", "[a-z0-9]{0,8}", 0..4),
    ) {
        let mut labels = others;
        if let Some(service) = &service {
            labels.insert(SERVICE_NAME_LABEL.to_string(), service.clone());
        }
        let json = serde_json::json!({
            "metadata": {"name": "web-x", "namespace": "shop", "labels": labels},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}],
        });
        let decoded: EndpointSlice = serde_json::from_value(json.clone()).expect("decodes");
        prop_assert_eq!(decoded.service_name.as_deref(), service.as_deref());
        let k8s: discovery::EndpointSlice = serde_json::from_value(json).expect("k8s-openapi decodes");
        prop_assert_eq!(&EndpointSlice::from(k8s), &decoded);
        let again = serde_json::to_vec(&decoded).expect("encodes");
        prop_assert_eq!(serde_json::from_slice::<EndpointSlice>(&again).expect("decodes again"), decoded);
    }
}

#[test]
fn an_endpoint_is_small() {
    // What the store holds per endpoint besides its address string (352 B in k8s-openapi).
    // 24 B, and a pointer for the hints.
    assert!(size_of::<Endpoint>() <= 32, "{}", size_of::<Endpoint>());
}

#[test]
fn a_stored_service_and_slice_are_small() {
    // k8s-openapi's ObjectMeta alone is 360 B; ours is namespace, name and annotations.
    assert!(size_of::<Meta>() <= 56, "{}", size_of::<Meta>());
    assert!(size_of::<Service>() <= 128, "{}", size_of::<Service>());
    assert!(size_of::<EndpointSlice>() <= 160, "{}", size_of::<EndpointSlice>());
}

#[test]
fn a_stored_ingress_is_small() {
    // k8s-openapi's Ingress is 584 B inline (ObjectMeta 360, a 128 B default backend inline).
    let size = size_of::<super::Ingress>();
    assert!(size <= 264, "{size}");
    assert!(size_of::<k8s_openapi::api::networking::v1::Ingress>() >= 2 * size);
}
