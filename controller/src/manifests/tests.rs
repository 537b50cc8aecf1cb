//! Manifest parsing: YAML and JSON as kubectl writes them, lists, skipped kinds, errors that
//! point at the file and document, and directory expansion.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use super::*;
use crate::compile::{CompileOptions, compile};

fn parse(text: &str) -> Vec<Object> {
    parse_documents(text, Path::new("test.yaml")).expect("the manifest parses")
}

fn parse_error(text: &str) -> ManifestError {
    parse_documents(text, Path::new("examples/shop.yaml")).expect_err("the manifest is rejected")
}

/// `Kind namespace/name` of each object, the way `Object` displays.
fn labels(objects: &[Object]) -> Vec<String> {
    objects.iter().map(ToString::to_string).collect()
}

const SERVICE: &str = "\
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports:
    - name: http
      port: 80
";

#[test]
fn multi_document_yaml_gives_one_object_per_document() {
    let text = format!(
        "# leading comment\n---\n{SERVICE}---\n# only a comment\n---\n{}",
        "\
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: shunt
spec:
  controller: shunt.dev/ingress-controller
---
apiVersion: v1
kind: Secret
metadata:
  name: tls
type: kubernetes.io/tls
data:
  tls.crt: Y2VydA==
  tls.key: a2V5
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: shop
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
  - addresses: [10.0.0.1]
...
"
    );
    let objects = parse(&text);
    assert_eq!(
        labels(&objects),
        vec![
            "Service shop/web",
            "IngressClass shunt",
            "Secret default/tls",
            "EndpointSlice shop/web-abc"
        ]
    );
    let Object::Service(service) = &objects[0] else {
        panic!("a Service first: {:?}", objects[0])
    };
    assert_eq!(
        service.spec.as_ref().and_then(|s| s.ports.as_ref()).map(|p| p[0].port),
        Some(80)
    );
    let Object::Secret(secret) = &objects[2] else {
        panic!("a Secret third")
    };
    let crt = secret.data.as_ref().and_then(|d| d.get("tls.crt")).map(|b| b.0.clone());
    assert_eq!(crt, Some(b"cert".to_vec()));
}

#[test]
fn objects_without_a_namespace_land_in_default_but_ingressclasses_stay_cluster_scoped() {
    let text = "\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ''}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: shunt}
";
    let objects = parse(text);
    assert_eq!(
        labels(&objects),
        vec!["Ingress default/web", "Service default/web", "IngressClass shunt"]
    );
    let Object::IngressClass(class) = &objects[2] else {
        panic!("an IngressClass")
    };
    assert_eq!(class.metadata.namespace, None);
}

#[test]
fn json_parses_like_yaml() {
    let text = r#"{
  "apiVersion": "networking.k8s.io/v1",
  "kind": "Ingress",
  "metadata": {"name": "web", "namespace": "shop"},
  "spec": {
    "ingressClassName": "shunt",
    "rules": [{"host": "shop.example.com", "http": {"paths": [
      {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}
    ]}}]
  }
}"#;
    let objects = parse(text);
    let Object::Ingress(ingress) = &objects[..].first().expect("one object") else {
        panic!("an Ingress")
    };
    let spec = ingress.spec.as_ref().expect("a spec");
    assert_eq!(spec.ingress_class_name.as_deref(), Some("shunt"));
    let path = &spec.rules.as_ref().expect("rules")[0]
        .http
        .as_ref()
        .expect("http")
        .paths[0];
    assert_eq!(
        path.backend
            .service
            .as_ref()
            .and_then(|s| s.port.as_ref())
            .and_then(|p| p.number),
        Some(80)
    );
}

#[test]
fn a_kubectl_json_list_gives_its_items() {
    let text = r#"{
    "apiVersion": "v1",
    "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "shop"}}
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}"#;
    assert_eq!(
        labels(&parse(text)),
        vec!["Service shop/web", "Deployment shop/web", "Service shop/api"]
    );
}

#[test]
fn yaml_lists_and_typed_lists_give_their_items() {
    let text = "\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: v1, kind: Service, metadata: {name: nested, namespace: shop}}
---
apiVersion: v1
kind: List
items: []
---
apiVersion: v1
kind: List
items: null
---
# As the API returns it: items carry no apiVersion or kind.
apiVersion: discovery.k8s.io/v1
kind: EndpointSliceList
metadata: {resourceVersion: '42'}
items:
- metadata: {name: web-a, namespace: shop, labels: {kubernetes.io/service-name: web}}
  addressType: IPv4
  endpoints: null
";
    let objects = parse(text);
    assert_eq!(
        labels(&objects),
        vec!["Service shop/web", "Service shop/nested", "EndpointSlice shop/web-a"]
    );
}

#[test]
fn unknown_kinds_and_versions_are_returned_as_skipped() {
    let text = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 'not even checked'}
---
apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata: {name: old}
---
apiVersion: example.com/v1
kind: Widget
";
    let objects = parse(text);
    let skipped = |api_version: &str, kind: &str, namespace: Option<&str>, name: Option<&str>| {
        Object::Skipped(Skipped {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: namespace.map(Into::into),
            name: name.map(Into::into),
        })
    };
    assert_eq!(
        objects,
        vec![
            skipped("apps/v1", "Deployment", Some("shop"), Some("web")),
            skipped("networking.k8s.io/v1beta1", "Ingress", None, Some("old")),
            skipped("example.com/v1", "Widget", None, None),
        ]
    );
    assert_eq!(labels(&objects), vec!["Deployment shop/web", "Ingress old", "Widget"]);
    let listed = ClusterState {
        secrets_listed: true,
        ..ClusterState::default()
    };
    assert_eq!(ClusterState::from_objects(objects), listed);
}

#[test]
fn a_bad_document_is_named_by_path_index_and_object() {
    let text = format!(
        "---\n{SERVICE}---\n# comment only\n---\n{SERVICE}---\n{}",
        "\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules: {host: not-a-list}
"
    );
    let error = parse_error(&text);
    assert!(matches!(&error, ManifestError::Document { document: 2, object: Some(o), .. } if o == "Ingress shop/web"));
    assert_eq!(
        error.to_string(),
        "examples/shop.yaml: document 2 (Ingress shop/web): invalid type: map, expected a sequence"
    );
}

#[test]
fn a_wrong_scalar_type_is_reported_with_the_value() {
    let text = "\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports: [{name: http, port: eighty}]
";
    assert_eq!(
        parse_error(text).to_string(),
        r#"examples/shop.yaml: document 0 (Service shop/web): invalid type: string "eighty", expected i32"#
    );
}

#[test]
fn a_bad_list_item_is_named_by_its_position() {
    let text = format!(
        "{SERVICE}---\n{}",
        "\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: ok}}
- {apiVersion: v1, kind: Service, metadata: {name: bad}, spec: {ports: 7}}
"
    );
    assert_eq!(
        parse_error(&text).to_string(),
        "examples/shop.yaml: document 1 (items[1] Service default/bad): invalid type: integer `7`, expected a sequence"
    );
    let text = "apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n";
    assert_eq!(
        parse_error(text).to_string(),
        "examples/shop.yaml: document 0 (items[0]): missing apiVersion"
    );
}

#[test]
fn a_yaml_syntax_error_names_the_document_it_is_in() {
    let text = format!(
        "{SERVICE}---\n\n# comment\n---\n{SERVICE}---\napiVersion: v1\nkind: Service\nmetadata: {{name: [web\n"
    );
    let error = parse_error(&text);
    assert!(matches!(
        error,
        ManifestError::Document {
            document: 2,
            object: None,
            source: DocumentError::Yaml(_),
            ..
        }
    ));
    let message = error.to_string();
    assert!(message.starts_with("examples/shop.yaml: document 2: "), "{message}");
    assert!(message.contains("line 26"), "the parser's line is file-wide: {message}");
    assert!(!message.contains('\n'), "one line for logs: {message}");
}

#[test]
fn documents_that_are_not_objects_or_lack_names_are_rejected() {
    let cases = [
        (
            "- just\n- a list\n",
            "examples/shop.yaml: document 0: expected an object with apiVersion and kind, found a sequence",
        ),
        ("kind: Service\n", "examples/shop.yaml: document 0: missing apiVersion"),
        (
            "apiVersion: v1\nmetadata: {name: x}\n",
            "examples/shop.yaml: document 0: missing kind",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {namespace: shop}\n",
            "examples/shop.yaml: document 0 (Service): missing metadata.name",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nmetadata: {name: b}\n",
            "examples/shop.yaml: document 0: duplicate",
        ),
    ];
    for (text, expected) in cases {
        let message = parse_error(text).to_string();
        assert!(
            message.starts_with(expected),
            "{message:?} should start with {expected:?}"
        );
    }
}

#[test]
fn an_empty_file_or_a_byte_order_mark_is_fine() {
    assert_eq!(parse(""), vec![]);
    assert_eq!(parse("# nothing here\n---\n"), vec![]);
    assert_eq!(labels(&parse(&format!("\u{feff}{SERVICE}"))), vec!["Service shop/web"]);
}

/// `kubectl get ingress -o yaml` output, server-side fields and all.
const KUBECTL_GET_INGRESS: &str = r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"annotations":{},"name":"web","namespace":"shop"},"spec":{"ingressClassName":"shunt","rules":[{"host":"shop.example.com","http":{"paths":[{"backend":{"service":{"name":"web","port":{"number":80}}},"path":"/","pathType":"Prefix"}]}}]}}
  creationTimestamp: "2024-05-01T12:34:56Z"
  generation: 1
  managedFields:
  - apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:spec:
        f:ingressClassName: {}
        f:rules: {}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2024-05-01T12:34:56Z"
  - apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:loadBalancer:
          f:ingress: {}
    manager: shunt
    operation: Update
    subresource: status
    time: "2024-05-01T12:35:01Z"
  name: web
  namespace: shop
  resourceVersion: "123456"
  uid: 6f1c1f0e-6a2b-4c1e-9d7a-1d2f3e4a5b6c
spec:
  ingressClassName: shunt
  rules:
  - host: shop.example.com
    http:
      paths:
      - backend:
          service:
            name: web
            port:
              number: 80
        path: /
        pathType: Prefix
  tls:
  - hosts:
    - shop.example.com
    secretName: shop-tls
status:
  loadBalancer:
    ingress:
    - ip: 192.0.2.10
      ports:
      - port: 443
        protocol: TCP
"#;

#[test]
fn a_kubectl_get_ingress_yaml_parses() {
    let text = KUBECTL_GET_INGRESS;
    let objects = parse(text);
    let [Object::Ingress(ingress)] = &objects[..] else {
        panic!("one Ingress: {objects:?}")
    };
    let created = ingress.metadata.creation_timestamp.as_ref().expect("a creation time");
    assert_eq!(created.0.to_string(), "2024-05-01T12:34:56Z");
    assert_eq!(ingress.metadata.managed_fields.as_ref().map(Vec::len), Some(2));
    let status = ingress
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref());
    assert_eq!(status.map(|s| s[0].ip.as_deref()), Some(Some("192.0.2.10")));
    let state = ClusterState::from_objects(objects.clone());
    let compiled = compile(&state, &CompileOptions::default());
    let reasons: Vec<_> = compiled.diagnostics.iter().map(|d| d.reason).collect();
    use crate::compile::Reason;
    assert_eq!(
        reasons,
        [Reason::MissingService, Reason::MissingTlsSecret],
        "no Service, no Secret in the file"
    );
}

#[test]
fn the_demo_manifests_parse_and_compile_cleanly() {
    let mut objects = Vec::new();
    for (name, text) in crate::cmd::demo::DEMO_MANIFESTS {
        objects.extend(parse_documents(text, Path::new(name)).expect("demo manifests parse"));
    }
    let compiled = compile(&ClusterState::from_objects(objects), &CompileOptions::default());
    assert_eq!(compiled.diagnostics, vec![]);
    assert!(compiled.table.backends.values().all(|b| !b.endpoints.is_empty()));
    assert_eq!(
        compiled.table.tls.hosts.len(),
        1,
        "shop.example.com has its demo certificate"
    );
}

// === ClusterState::from_objects ===

#[test]
fn later_objects_replace_earlier_ones_of_the_same_kind_and_name() {
    let text = "\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, annotations: {version: one}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: blog}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, annotations: {version: two}}
";
    let state = ClusterState::from_objects(parse(text));
    let services: Vec<_> = state
        .services
        .iter()
        .map(|s| {
            (
                s.metadata.namespace.as_deref(),
                s.metadata
                    .annotations
                    .as_ref()
                    .and_then(|l| l.get("version"))
                    .map(String::as_str),
            )
        })
        .collect();
    assert_eq!(services, vec![(Some("blog"), None), (Some("shop"), Some("two"))]);
    assert_eq!(state.ingresses.len(), 1);
}

// === files ===

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the temp dir is writable");
    path
}

#[test]
fn a_directory_expands_to_its_manifest_files_sorted_by_name() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for name in ["b.yaml", "a.yml", "c.JSON", ".hidden.yaml", "notes.txt", "yaml"] {
        write(dir.path(), name, "");
    }
    std::fs::create_dir(dir.path().join("nested.yaml")).expect("a subdirectory");
    write(&dir.path().join("nested.yaml"), "inner.yaml", "");
    let explicit = write(dir.path(), "explicit.txt", "");

    let roots = vec![dir.path().to_path_buf(), explicit.clone(), dir.path().join("b.yaml")];
    let files = expand(&roots).expect("the paths exist");
    let names: Vec<_> = files
        .iter()
        .map(|f| f.strip_prefix(dir.path()).expect("inside the dir").to_owned())
        .collect();
    let expected: Vec<PathBuf> = ["a.yml", "b.yaml", "c.JSON", "explicit.txt"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(names, expected);
    assert_eq!(files[3], explicit);

    assert!(expand(&[dir.path().join("missing")]).is_err());
}

#[test]
fn load_reads_every_file_and_names_the_file_that_fails() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), "1-service.yaml", SERVICE);
    write(
        dir.path(),
        "2-class.json",
        r#"{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "shunt"}}"#,
    );
    let state = load(&[dir.path().to_path_buf()]).expect("both files load");
    assert_eq!((state.services.len(), state.ingress_classes.len()), (1, 1));

    let bad = write(dir.path(), "3-bad.yaml", &format!("{SERVICE}---\nkind: Service\n"));
    let error = load(&[dir.path().to_path_buf()]).expect_err("the bad file fails");
    assert_eq!(
        error.to_string(),
        format!("{}: document 1: missing apiVersion", bad.display())
    );

    let missing = dir.path().join("gone.yaml");
    let error = parse_file(&missing).expect_err("no such file");
    assert!(matches!(&error, ManifestError::Read { path, .. } if *path == missing));
    assert!(
        error.to_string().starts_with(&format!("{}: ", missing.display())),
        "{error}"
    );
    let error = load(std::slice::from_ref(&missing)).expect_err("no such root");
    assert!(matches!(&error, ManifestError::Read { path, .. } if *path == missing));
}

// === CompactObjects ===

#[test]
fn compact_objects_decode_to_the_objects_compile_reads_in_their_order() {
    let mut objects = Vec::new();
    for (name, text) in crate::cmd::demo::DEMO_MANIFESTS {
        objects.extend(parse_documents(text, Path::new(name)).expect("demo manifests parse"));
    }
    objects.extend(parse(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n",
    ));
    let kinds: BTreeSet<_> = objects.iter().map(|o| o.kind().to_string()).collect();
    assert_eq!(
        kinds,
        [
            "Deployment",
            "EndpointSlice",
            "Ingress",
            "IngressClass",
            "Secret",
            "Service"
        ]
        .map(String::from)
        .into(),
        "every kind, so each round-trips"
    );
    let compact = CompactObjects::encode(objects.clone()).expect("parsed objects encode");
    let read: Vec<Object> = objects
        .into_iter()
        .filter(|o| !matches!(o, Object::Skipped(_)))
        .collect();
    assert_eq!(compact.decode(), read);
}

#[test]
fn compact_objects_are_equal_exactly_when_the_objects_are() {
    let encode = |objects| CompactObjects::encode(objects).expect("parsed objects encode");
    let one = encode(parse(SERVICE));
    assert_eq!(one, encode(parse(SERVICE)));
    let edited = encode(parse(&SERVICE.replace("port: 80", "port: 81")));
    assert_ne!(one, edited);
    assert!(encode(Vec::new()).len() < one.len());
}

// === Gateway API ===

const GATEWAY_API: &str = "\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shunt}
spec: {controllerName: shunt.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec: {gatewayClassName: shunt, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: shop}
spec: {parentRefs: [{name: web}], rules: [{backendRefs: [{name: api, port: 8080, weight: 3}]}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: let-shop, namespace: default}
spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop}], to: [{group: '', kind: Service}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: later, namespace: shop}
";

#[test]
fn gateway_api_kinds_are_read_and_kept_through_the_compact_form() {
    let objects = parse(GATEWAY_API);
    assert_eq!(
        labels(&objects),
        [
            "GatewayClass shunt",
            "Gateway default/web",
            "HTTPRoute shop/api",
            "ReferenceGrant default/let-shop",
            "GRPCRoute shop/later",
        ]
    );
    let Object::HTTPRoute(route) = &objects[2] else {
        panic!("an HTTPRoute: {:?}", objects[2]);
    };
    assert_eq!(route.spec.rules[0].backend_refs[0].weight, Some(3));
    let compact = CompactObjects::encode(objects.clone()).expect("parsed objects encode");
    let kept: Vec<Object> = objects
        .into_iter()
        .filter(|o| !matches!(o, Object::Skipped(_)))
        .collect();
    assert_eq!(compact.decode(), kept);
    let state = ClusterState::from_objects(kept);
    let counts = (
        state.gateway_classes.len(),
        state.gateways.len(),
        state.http_routes.len(),
        state.reference_grants.len(),
    );
    assert_eq!(counts, (1, 1, 1, 1));
}

#[test]
fn a_tke_service_config_is_kept_with_its_spec_and_survives_compaction() {
    let text = "\
apiVersion: cloud.tencent.com/v1alpha1
kind: TkeServiceConfig
metadata: {name: shop-config, namespace: shop}
spec: {loadBalancer: {l7Listeners: [{protocol: HTTP, port: 80}]}}
";
    let objects = parse(text);
    assert_eq!(labels(&objects), ["TkeServiceConfig shop/shop-config"]);
    let kept = CompactObjects::encode(objects.clone()).expect("encodes").decode();
    assert_eq!(kept, objects);
    let state = ClusterState::from_objects(kept);
    let spec = state.tke_service_configs[0].spec.as_ref().expect("a spec");
    assert_eq!(spec["loadBalancer"]["l7Listeners"][0]["port"], 80);
}
