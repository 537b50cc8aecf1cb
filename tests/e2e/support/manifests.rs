//! Kubernetes objects as YAML, written where shunt watches them.
//!
//! ```text
//! mk_* builders ─▶ serde_json::Value ─to_yaml─▶ multi-document YAML ─rename─▶ Manifests dir ─▶ shunt
//! ```

use std::{fmt::Write as _, fs, path::Path};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::Backend;

pub const CONTROLLER: &str = "shunt.dev/ingress-controller";

/// Something that becomes one or more YAML documents.
pub trait Manifest {
    fn documents(&self) -> Vec<Value>;
}

/// A directory of manifest files, removed when dropped.
pub struct Manifests {
    dir: TempDir,
}

pub struct Ingress {
    namespace: String,
    name: String,
    class: Option<String>,
    annotations: Vec<(String, String)>,
    rules: Vec<Value>,
    default_backend: Option<Value>,
}

pub struct Service {
    namespace: String,
    name: String,
    ports: Vec<Value>,
}

pub struct EndpointSlice {
    namespace: String,
    service: String,
    port_name: Option<String>,
    port: u16,
    endpoints: Vec<Value>,
}

/// How an Ingress backend names its Service port.
pub enum PortRef {
    Number(u16),
    Name(String),
}

// === impl Manifests ===

impl Manifests {
    pub fn new() -> Self {
        Manifests {
            dir: tempfile::tempdir().expect("creating a manifest directory"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `file` holding `objects`, replacing it whole (shunt never reads half a file).
    pub fn write(&self, file: &str, objects: &[&dyn Manifest]) {
        let documents: Vec<Value> = objects.iter().flat_map(|object| object.documents()).collect();
        self.write_text(file, &to_yaml(&documents));
    }

    /// Writes `text` as `file` through a hidden temporary file and a rename, as `kubectl` and
    /// ConfigMap volumes do. Hidden files are not manifests, so the half-written one is never read.
    /// The YAML files of `examples/NAME/`, as the repository has them.
    pub fn from_example(name: &str) -> Self {
        let manifests = Manifests::new();
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name);
        for entry in fs::read_dir(&examples).expect("the example directory exists") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let file = path.file_name().and_then(|n| n.to_str()).expect("a file name");
                manifests.write_text(file, &fs::read_to_string(&path).expect("a readable example"));
            }
        }
        manifests
    }

    pub fn write_text(&self, file: &str, text: &str) {
        let staging = self.dir.path().join(format!(".{file}.tmp"));
        fs::write(&staging, text).expect("writing a manifest");
        fs::rename(&staging, self.dir.path().join(file)).expect("renaming a manifest into place");
    }
}

impl Manifest for Value {
    fn documents(&self) -> Vec<Value> {
        vec![self.clone()]
    }
}

impl<T: Manifest> Manifest for Vec<T> {
    fn documents(&self) -> Vec<Value> {
        self.iter().flat_map(Manifest::documents).collect()
    }
}

// === objects ===

pub fn mk_ingress_class(name: &str, controller: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": name},
        "spec": {"controller": controller},
    })
}

/// An IngressClass annotated `ingressclass.kubernetes.io/is-default-class: "true"`.
pub fn mk_default_ingress_class(name: &str, controller: &str) -> Value {
    let mut class = mk_ingress_class(name, controller);
    class["metadata"]["annotations"] = json!({"ingressclass.kubernetes.io/is-default-class": "true"});
    class
}

/// `ingressClassName: shunt` unless changed.
pub fn mk_ingress(namespace: &str, name: &str) -> Ingress {
    Ingress {
        namespace: namespace.to_string(),
        name: name.to_string(),
        class: Some("shunt".to_string()),
        annotations: Vec::new(),
        rules: Vec::new(),
        default_backend: None,
    }
}

/// One path of a rule: `pathType` is `Exact`, `Prefix` or `ImplementationSpecific`.
pub fn mk_path(path: &str, path_type: &str, service: &str, port: impl Into<PortRef>) -> Value {
    json!({"path": path, "pathType": path_type, "backend": service_backend(service, port.into())})
}

/// A Service with no ports yet; see [`Service::port`].
pub fn mk_service(namespace: &str, name: &str) -> Service {
    Service {
        namespace: namespace.to_string(),
        name: name.to_string(),
        ports: Vec::new(),
    }
}

/// An EndpointSlice of `service` with one port (unnamed unless [`EndpointSlice::port_name`]).
pub fn mk_slice(namespace: &str, service: &str, port: u16) -> EndpointSlice {
    EndpointSlice {
        namespace: namespace.to_string(),
        service: service.to_string(),
        port_name: None,
        port,
        endpoints: Vec::new(),
    }
}

/// Service `name` with port 80 (named `http`, optionally with an `appProtocol`) and one ready
/// endpoint slice per backend, each `127.0.0.1:<backend port>`.
pub fn mk_backend_service(
    namespace: &str,
    name: &str,
    app_protocol: Option<&str>,
    backends: &[&Backend],
) -> Vec<Value> {
    let ports: Vec<u16> = backends.iter().map(|backend| backend.port()).collect();
    mk_service_on_ports(namespace, name, app_protocol, &ports)
}

/// Like [`mk_backend_service`] for bare ports (say, ones nothing listens on).
pub fn mk_service_on_ports(namespace: &str, name: &str, app_protocol: Option<&str>, ports: &[u16]) -> Vec<Value> {
    let mut documents = mk_service(namespace, name)
        .port(Some("http"), 80, app_protocol)
        .documents();
    for &port in ports {
        documents.extend(
            mk_slice(namespace, name, port)
                .port_name("http")
                .ready("127.0.0.1")
                .documents(),
        );
    }
    documents
}

// === impl Ingress ===

impl Ingress {
    /// `spec.ingressClassName`.
    pub fn class(mut self, class: &str) -> Self {
        self.class = Some(class.to_string());
        self
    }

    /// Neither field nor annotation (add one with [`Ingress::annotation`]).
    pub fn without_class(mut self) -> Self {
        self.class = None;
        self
    }

    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.annotations.push((key.to_string(), value.to_string()));
        self
    }

    /// A rule; an empty `host` makes a rule without a host.
    pub fn rule(mut self, host: &str, paths: impl IntoIterator<Item = Value>) -> Self {
        let mut rule = json!({"http": {"paths": paths.into_iter().collect::<Vec<_>>()}});
        if !host.is_empty() {
            rule["host"] = json!(host);
        }
        self.rules.push(rule);
        self
    }

    pub fn default_backend(mut self, service: &str, port: impl Into<PortRef>) -> Self {
        self.default_backend = Some(service_backend(service, port.into()));
        self
    }
}

impl Manifest for Ingress {
    fn documents(&self) -> Vec<Value> {
        let mut metadata = json!({"name": self.name, "namespace": self.namespace});
        if !self.annotations.is_empty() {
            metadata["annotations"] = self.annotations.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        }
        let mut spec = json!({});
        if let Some(class) = &self.class {
            spec["ingressClassName"] = json!(class);
        }
        if let Some(backend) = &self.default_backend {
            spec["defaultBackend"] = backend.clone();
        }
        if !self.rules.is_empty() {
            spec["rules"] = json!(self.rules);
        }
        vec![json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": spec})]
    }
}

fn service_backend(service: &str, port: PortRef) -> Value {
    let port = match port {
        PortRef::Number(number) => json!({"number": number}),
        PortRef::Name(name) => json!({"name": name}),
    };
    json!({"service": {"name": service, "port": port}})
}

impl From<u16> for PortRef {
    fn from(number: u16) -> Self {
        PortRef::Number(number)
    }
}

impl From<&str> for PortRef {
    fn from(name: &str) -> Self {
        PortRef::Name(name.to_string())
    }
}

// === impl Service ===

impl Service {
    pub fn port(mut self, name: Option<&str>, port: u16, app_protocol: Option<&str>) -> Self {
        let mut entry = json!({"port": port, "targetPort": port, "protocol": "TCP"});
        if let Some(name) = name {
            entry["name"] = json!(name);
        }
        if let Some(app_protocol) = app_protocol {
            entry["appProtocol"] = json!(app_protocol);
        }
        self.ports.push(entry);
        self
    }
}

impl Manifest for Service {
    fn documents(&self) -> Vec<Value> {
        vec![json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {"ports": self.ports},
        })]
    }
}

// === impl EndpointSlice ===

impl EndpointSlice {
    /// Must equal the Service port's name for the slice to serve it.
    pub fn port_name(mut self, name: &str) -> Self {
        self.port_name = Some(name.to_string());
        self
    }

    pub fn ready(self, address: &str) -> Self {
        self.endpoint(address, true, true, false)
    }

    pub fn endpoint(mut self, address: &str, ready: bool, serving: bool, terminating: bool) -> Self {
        let conditions = json!({"ready": ready, "serving": serving, "terminating": terminating});
        self.endpoints
            .push(json!({"addresses": [address], "conditions": conditions}));
        self
    }
}

impl Manifest for EndpointSlice {
    fn documents(&self) -> Vec<Value> {
        let mut port = json!({"port": self.port, "protocol": "TCP"});
        if let Some(name) = &self.port_name {
            port["name"] = json!(name);
        }
        vec![json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                // Unique per port, as the endpoint slice controller's generated names are.
                "name": format!("{}-{}", self.service, self.port),
                "namespace": self.namespace,
                "labels": {"kubernetes.io/service-name": self.service},
            },
            "addressType": "IPv4",
            "ports": [port],
            "endpoints": self.endpoints,
        })]
    }
}

// === YAML ===

/// Block-style YAML, one document per value, separated by `---`. Strings are double-quoted with
/// JSON escapes, which YAML reads the same way.
pub fn to_yaml(documents: &[Value]) -> String {
    let mut out = String::new();
    for (index, document) in documents.iter().enumerate() {
        if index > 0 {
            out.push_str("---\n");
        }
        emit(document, 0, &mut out);
    }
    out
}

fn emit(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                let _ = write!(out, "{pad}{}:", yaml_key(key));
                emit_child(value, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                // Render the item one level deeper, then hang its first line on the dash.
                let mut nested = String::new();
                emit(item, indent + 2, &mut nested);
                let _ = write!(out, "{pad}- {}", &nested[indent + 2..]);
            }
        }
        scalar => {
            let _ = writeln!(out, "{pad}{}", yaml_scalar(scalar));
        }
    }
}

fn emit_child(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            emit(value, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            emit(value, indent + 2, out);
        }
        scalar => {
            let _ = writeln!(out, " {}", yaml_scalar(scalar));
        }
    }
}

fn yaml_scalar(value: &Value) -> String {
    match value {
        Value::Object(_) => "{}".to_string(),
        Value::Array(_) => "[]".to_string(),
        other => other.to_string(),
    }
}

fn yaml_key(key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    if plain {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    }
}
