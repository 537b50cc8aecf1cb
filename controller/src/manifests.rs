//! Standalone mode's input: manifest files as `kubectl get -o yaml` (or `-o json`) writes them,
//! turned into the objects the API watchers would deliver, then into a [`ClusterState`].
//!
//! ```text
//! paths ─expand─▶ files ─parse_file─▶ YAML documents ─▶ serde_json::Value ─apiVersion+kind─▶ Object
//!                                      (JSON is YAML)        └ List / *List: each item
//! objects ─ClusterState::from_objects─▶ ClusterState
//! ```
//! Errors name the file and the document; a caller watching files keeps each file's last good
//! objects, so [`parse_file`] works on one file at a time.

use std::{
    collections::{BTreeMap, HashSet},
    fmt, fs, io,
    path::{Path, PathBuf},
    sync::Arc,
};

use k8s_openapi::{
    Metadata,
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::{Ingress, IngressClass},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{
    compile::{ClusterState, DEFAULT_NAMESPACE},
    objects::{ApiEndpointSlice, ApiService, EndpointSlice, MetaNames, Named, Namespace, Service, TkeServiceConfig},
    sources::gateway::{
        grpc::objects::GRPCRoute,
        objects::{Gateway, GatewayClass, HTTPRoute, ReferenceGrant},
    },
};

mod compact;
#[cfg(test)]
mod tests;
mod watcher;

pub use compact::CompactObjects;
pub use watcher::{ManifestSource, ManifestWatcher};

/// One object from a manifest.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "every kind but Skipped is a few hundred bytes; boxing would only add allocations"
)]
pub enum Object {
    Ingress(Ingress),
    IngressClass(IngressClass),
    Service(Service),
    EndpointSlice(EndpointSlice),
    Secret(Secret),
    ConfigMap(ConfigMap),
    GatewayClass(GatewayClass),
    Gateway(Gateway),
    HTTPRoute(HTTPRoute),
    GRPCRoute(GRPCRoute),
    /// `v1` or `v1beta1`.
    ReferenceGrant(ReferenceGrant),
    /// TKE's CLB settings for a qcloud Ingress.
    TkeServiceConfig(TkeServiceConfig),
    /// Its labels, for Gateway listeners that select namespaces.
    Namespace(Namespace),
    /// A kind compile does not read (a Deployment next to its Service): kept so the caller can
    /// say so, ignored by [`ClusterState::from_objects`].
    Skipped(Skipped),
}

/// What is known of a skipped object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// A path given on the command line: a typo should stop startup, not serve nothing.
    #[error("manifest path {} does not exist", path.display())]
    Missing { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The objects parsed but could not be kept (see [`CompactObjects::encode`]).
    #[error("{}: keeping the objects: {source}", path.display())]
    Keep {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// `document` counts from 0 and skips empty documents, as the parser does.
    #[error("{}: document {document}{}: {source}", path.display(), Described(object))]
    Document {
        path: PathBuf,
        document: usize,
        /// `Ingress shop/web`, `items[2] Service shop/api`: when known.
        object: Option<String>,
        #[source]
        source: DocumentError,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// Boxed: the parser's error is large and errors travel by value.
    #[error("{0}")]
    Yaml(#[source] Box<serde_saphyr::Error>),
    #[error("expected an object with apiVersion and kind, found {0}")]
    NotAnObject(&'static str),
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("{0}")]
    Decode(#[source] serde_json::Error),
}

/// The files under `paths`: a file as given, a directory's `*.yaml`, `*.yml` and `*.json`
/// files (not recursive, hidden ones skipped) sorted by name. Each file appears once.
pub fn expand(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if !fs::metadata(path)?.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in fs::read_dir(path)? {
            let path = entry?.path();
            // `is_file` follows symlinks, as ConfigMap volumes need (`shop.yaml -> ..data/shop.yaml`).
            if is_manifest_name(&path) && path.is_file() {
                found.push(path);
            }
        }
        found.sort();
        files.extend(found);
    }
    let mut seen = HashSet::new();
    files.retain(|file| seen.insert(file.clone()));
    Ok(files)
}

fn is_manifest_name(path: &Path) -> bool {
    let hidden = path
        .file_name()
        .is_none_or(|name| name.as_encoded_bytes().starts_with(b"."));
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or_default();
    !hidden
        && ["yaml", "yml", "json"]
            .iter()
            .any(|known| extension.eq_ignore_ascii_case(known))
}

/// Reads and parses one manifest file.
pub fn parse_file(path: &Path) -> Result<Vec<Object>, ManifestError> {
    let text = fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_documents(&text, path)
}

/// Every file under `paths`, parsed into one state. Fails on the first bad file.
pub fn load(paths: &[PathBuf]) -> Result<ClusterState, ManifestError> {
    let mut objects = Vec::new();
    for root in paths {
        let files = expand(std::slice::from_ref(root)).map_err(|source| ManifestError::Read {
            path: root.clone(),
            source,
        })?;
        for file in files {
            objects.extend(parse_file(&file)?);
        }
    }
    Ok(ClusterState::from_objects(objects))
}

/// Parses multi-document YAML or JSON; `origin` only names the source in errors.
pub fn parse_documents(text: &str, origin: &Path) -> Result<Vec<Object>, ManifestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let error = |document, object, source| ManifestError::Document {
        path: origin.to_path_buf(),
        document,
        object,
        source,
    };
    let options = serde_saphyr::options! { with_snippet: false };
    let documents: Vec<Value> = serde_saphyr::from_multiple_with_options(text, options).map_err(|yaml| {
        let document = yaml.location().map_or(0, |at| document_at_line(text, at.line()));
        error(document, None, DocumentError::Yaml(Box::new(yaml)))
    })?;
    let mut objects = Vec::new();
    for (index, document) in documents.into_iter().enumerate() {
        collect(document, None, &mut objects).map_err(|failure| error(index, failure.object, failure.source))?;
    }
    Ok(objects)
}

/// A document or list item that did not become an [`Object`].
struct Failure {
    object: Option<String>,
    source: DocumentError,
}

/// Turns one document into objects: itself, or each item of a list. List items of a typed
/// list (`IngressList` from the API) may omit `apiVersion` and `kind`; they inherit them.
fn collect(mut value: Value, inherited: Option<(&str, &str)>, out: &mut Vec<Object>) -> Result<(), Failure> {
    let Value::Object(map) = &mut value else {
        return Err(Failure {
            object: None,
            source: DocumentError::NotAnObject(json_type(&value)),
        });
    };
    if let Some((api_version, kind)) = inherited {
        map.entry("apiVersion").or_insert_with(|| api_version.into());
        map.entry("kind").or_insert_with(|| kind.into());
    }
    let field = |name| map.get(name).and_then(Value::as_str).map(str::to_string);
    let missing = |what| Failure {
        object: None,
        source: DocumentError::Missing(what),
    };
    let api_version = field("apiVersion").ok_or_else(|| missing("apiVersion"))?;
    let kind = field("kind").ok_or_else(|| missing("kind"))?;
    if let Some(items) = list_items(&kind, map) {
        let item_type = kind
            .strip_suffix("List")
            .filter(|kind| !kind.is_empty())
            .map(|kind| (api_version.as_str(), kind));
        for (index, item) in items.into_iter().enumerate() {
            collect(item, item_type, out).map_err(|failure| Failure {
                object: Some(match failure.object {
                    Some(object) => format!("items[{index}] {object}"),
                    None => format!("items[{index}]"),
                }),
                source: failure.source,
            })?;
        }
        return Ok(());
    }
    let object = decode(&api_version, &kind, value);
    out.push(object.map_err(|(label, source)| Failure {
        object: Some(label),
        source,
    })?);
    Ok(())
}

/// The items of a `List` or `*List` document, taken out of it.
fn list_items(kind: &str, map: &mut Map<String, Value>) -> Option<Vec<Value>> {
    let typed_list = kind.ends_with("List") && map.get("items").is_some_and(Value::is_array);
    if kind != "List" && !typed_list {
        return None;
    }
    match map.remove("items") {
        Some(Value::Array(items)) => Some(items),
        // `kind: List` with `items: null` or no items: an empty list.
        _ => Some(Vec::new()),
    }
}

/// Dispatches on `apiVersion` + `kind`. Errors carry the object's label.
fn decode(api_version: &str, kind: &str, value: Value) -> Result<Object, (String, DocumentError)> {
    let namespaced = !matches!(
        (api_version, kind),
        ("networking.k8s.io/v1", "IngressClass")
            | ("gateway.networking.k8s.io/v1", "GatewayClass")
            | ("v1", "Namespace")
    );
    let label = label(kind, &value, namespaced);
    let decoded = match (api_version, kind) {
        ("networking.k8s.io/v1", "Ingress") => typed(value, namespaced).map(Object::Ingress),
        ("networking.k8s.io/v1", "IngressClass") => typed(value, namespaced).map(Object::IngressClass),
        ("v1", "Service") => typed::<ApiService>(value, namespaced).map(|o| Object::Service(o.into())),
        ("discovery.k8s.io/v1", "EndpointSlice") => {
            typed::<ApiEndpointSlice>(value, namespaced).map(|o| Object::EndpointSlice(o.into()))
        }
        ("v1", "Secret") => typed(value, namespaced).map(Object::Secret),
        ("v1", "ConfigMap") => typed(value, namespaced).map(Object::ConfigMap),
        ("gateway.networking.k8s.io/v1", "GatewayClass") => typed(value, namespaced).map(Object::GatewayClass),
        ("gateway.networking.k8s.io/v1", "Gateway") => typed(value, namespaced).map(Object::Gateway),
        ("gateway.networking.k8s.io/v1", "HTTPRoute") => typed(value, namespaced).map(Object::HTTPRoute),
        ("gateway.networking.k8s.io/v1", "GRPCRoute") => typed(value, namespaced).map(Object::GRPCRoute),
        ("gateway.networking.k8s.io/v1" | "gateway.networking.k8s.io/v1beta1", "ReferenceGrant") => {
            typed(value, namespaced).map(Object::ReferenceGrant)
        }
        ("cloud.tencent.com/v1alpha1", "TkeServiceConfig") => typed(value, namespaced).map(Object::TkeServiceConfig),
        ("v1", "Namespace") => typed(value, namespaced).map(Object::Namespace),
        _ => {
            let meta = |field| value.get("metadata")?.get(field)?.as_str().map(str::to_string);
            Ok(Object::Skipped(Skipped {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
                namespace: meta("namespace"),
                name: meta("name"),
            }))
        }
    };
    decoded.map_err(|source| (label, source))
}

fn typed<T: DeserializeOwned + Metadata<Ty = ObjectMeta>>(value: Value, namespaced: bool) -> Result<T, DocumentError> {
    let mut object: T = serde_json::from_value(value).map_err(DocumentError::Decode)?;
    let meta = object.metadata_mut();
    if meta.name.as_deref().is_none_or(str::is_empty) {
        return Err(DocumentError::Missing("metadata.name"));
    }
    if namespaced && meta.namespace.as_deref().is_none_or(str::is_empty) {
        meta.namespace = Some(DEFAULT_NAMESPACE.to_string());
    }
    Ok(object)
}

/// `Ingress shop/web`, `IngressClass shunt`, or just the kind when the name is missing.
fn label(kind: &str, value: &Value, namespaced: bool) -> String {
    let meta = |field| value.get("metadata")?.get(field)?.as_str().filter(|s| !s.is_empty());
    match (
        meta("namespace").or(namespaced.then_some(DEFAULT_NAMESPACE)),
        meta("name"),
    ) {
        (_, None) => kind.to_string(),
        (Some(namespace), Some(name)) if namespaced => format!("{kind} {namespace}/{name}"),
        (_, Some(name)) => format!("{kind} {name}"),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "an object",
    }
}

/// Which document (counted as the parser counts them: empty ones skipped) holds 1-based `line`.
/// Only used to place syntax errors, which the parser reports by line.
fn document_at_line(text: &str, line: u64) -> usize {
    let mut documents = 0usize;
    let mut in_document = false;
    for (_, text_line) in (1..=line).zip(text.lines()) {
        let content = match marker(text_line) {
            Some(("---", rest)) => {
                in_document = false;
                rest
            }
            Some((_, _)) => {
                in_document = false;
                continue;
            }
            None => text_line,
        };
        let content = content.trim_start();
        let blank = content.is_empty() || content.starts_with('#') || content.starts_with('%');
        if !blank && !in_document {
            documents += 1;
            in_document = true;
        }
    }
    documents.saturating_sub(1)
}

/// Splits a `---` (start) or `...` (end) document marker line into marker and the rest.
fn marker(line: &str) -> Option<(&str, &str)> {
    let (marker, rest) = line.split_at_checked(3)?;
    let is_marker = matches!(marker, "---" | "...") && (rest.is_empty() || rest.starts_with([' ', '\t']));
    is_marker.then_some((marker, rest))
}

// === impl ClusterState ===

impl ClusterState {
    /// Collects objects by kind. A later object with the same kind, namespace and name replaces
    /// an earlier one, as a second `kubectl apply` would; skipped kinds are dropped.
    pub fn from_objects(objects: impl IntoIterator<Item = Object>) -> Self {
        fn key(meta: &impl MetaNames) -> (Option<String>, Option<String>) {
            (meta.namespace().map(str::to_string), meta.name().map(str::to_string))
        }
        let (mut ingresses, mut classes, mut services, mut slices, mut secrets, mut config_maps) = (
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
        );
        let (mut gateway_classes, mut gateways, mut http_routes, mut grants, mut tke_configs, mut namespaces) = (
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
        );
        let mut grpc_routes = BTreeMap::new();
        for object in objects {
            match object {
                Object::Ingress(o) => _ = ingresses.insert(key(&o.metadata), Arc::new(o.into())),
                Object::IngressClass(o) => _ = classes.insert(key(&o.metadata), Arc::new(o)),
                Object::Service(o) => _ = services.insert(key(&o.metadata), Arc::new(o)),
                Object::EndpointSlice(o) => _ = slices.insert(key(&o.metadata), Arc::new(o)),
                Object::Secret(o) => _ = secrets.insert(key(&o.metadata), Arc::new(o)),
                Object::ConfigMap(o) => _ = config_maps.insert(key(&o.metadata), Arc::new(o)),
                Object::GatewayClass(o) => _ = gateway_classes.insert(key(&o.metadata), Arc::new(o)),
                Object::Gateway(o) => _ = gateways.insert(key(&o.metadata), Arc::new(o)),
                Object::HTTPRoute(o) => _ = http_routes.insert(key(&o.metadata), Arc::new(o)),
                Object::GRPCRoute(o) => _ = grpc_routes.insert(key(&o.metadata), Arc::new(o)),
                Object::ReferenceGrant(o) => _ = grants.insert(key(&o.metadata), Arc::new(o)),
                Object::TkeServiceConfig(o) => _ = tke_configs.insert(key(&o.metadata), Arc::new(o)),
                Object::Namespace(o) => _ = namespaces.insert(key(&o.metadata), Arc::new(o)),
                Object::Skipped(_) => {}
            }
        }
        ClusterState {
            ingresses: ingresses.into_values().collect(),
            ingress_classes: classes.into_values().collect(),
            services: services.into_values().collect(),
            endpoint_slices: slices.into_values().collect(),
            secrets: secrets.into_values().collect(),
            config_maps: config_maps.into_values().collect(),
            gateway_classes: gateway_classes.into_values().collect(),
            gateways: gateways.into_values().collect(),
            http_routes: http_routes.into_values().collect(),
            grpc_routes: grpc_routes.into_values().collect(),
            reference_grants: grants.into_values().collect(),
            tke_service_configs: tke_configs.into_values().collect(),
            namespaces: namespaces.into_values().collect(),
            secrets_listed: true,
            secret_names: Vec::new(),
        }
    }
}

// === impl Object ===

impl Object {
    pub fn kind(&self) -> &str {
        match self {
            Object::Ingress(_) => "Ingress",
            Object::IngressClass(_) => "IngressClass",
            Object::Service(_) => "Service",
            Object::EndpointSlice(_) => "EndpointSlice",
            Object::Secret(_) => "Secret",
            Object::ConfigMap(_) => "ConfigMap",
            Object::GatewayClass(_) => "GatewayClass",
            Object::Gateway(_) => "Gateway",
            Object::HTTPRoute(_) => "HTTPRoute",
            Object::GRPCRoute(_) => "GRPCRoute",
            Object::ReferenceGrant(_) => "ReferenceGrant",
            Object::TkeServiceConfig(_) => "TkeServiceConfig",
            Object::Namespace(_) => "Namespace",
            Object::Skipped(skipped) => &skipped.kind,
        }
    }

    fn namespace_name(&self) -> (Option<&str>, Option<&str>) {
        let meta = match self {
            Object::Ingress(o) => &o.metadata,
            Object::IngressClass(o) => &o.metadata,
            Object::Service(o) => return o.namespace_name(),
            Object::EndpointSlice(o) => return o.namespace_name(),
            Object::Secret(o) => &o.metadata,
            Object::ConfigMap(o) => &o.metadata,
            Object::GatewayClass(o) => &o.metadata,
            Object::Gateway(o) => &o.metadata,
            Object::HTTPRoute(o) => &o.metadata,
            Object::GRPCRoute(o) => &o.metadata,
            Object::ReferenceGrant(o) => &o.metadata,
            Object::TkeServiceConfig(o) => &o.metadata,
            Object::Namespace(o) => &o.metadata,
            Object::Skipped(skipped) => return (skipped.namespace.as_deref(), skipped.name.as_deref()),
        };
        (meta.namespace.as_deref(), meta.name.as_deref())
    }
}

/// `Ingress shop/web`, `IngressClass shunt`.
impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace_name() {
            (Some(namespace), Some(name)) => write!(f, "{} {namespace}/{name}", self.kind()),
            (None, Some(name)) => write!(f, "{} {name}", self.kind()),
            (_, None) => f.write_str(self.kind()),
        }
    }
}

/// Renders an optional object label as ` (label)`.
struct Described<'a>(&'a Option<String>);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(object) => write!(f, " ({object})"),
            None => Ok(()),
        }
    }
}
