//! The pure heart of the controller: cluster objects in, a route table and diagnostics out.
//! No I/O, no clock, no `Client`: watchers and standalone manifests both call [`compile`], and
//! equal input gives an equal table.
//!
//! ```text
//! ClusterState ─class─▶ selected Ingresses ─sort (created, ns, name)─▶ each rule and path
//!     │                                                                 ├─ host, path: paths
//!     └ Services, EndpointSlices ─────────────────────────────────────▶ ├─ backend: backend
//!                                                                       └─ first claim wins: table
//! Compiled { table: TableSpec, diagnostics, served }
//! ```

mod backend;
mod class;
mod diagnostics;
mod ingress;
mod paths;
mod table;

#[cfg(test)]
mod tests;

use k8s_openapi::{
    api::{
        core::v1::{Secret, Service},
        discovery::v1::EndpointSlice,
        networking::v1::{Ingress, IngressClass},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use serde::Serialize;
use shunt_proxy::routes::spec::TableSpec;

pub use self::diagnostics::{Diagnostic, Reason};
use self::{
    class::{Classes, Selection},
    ingress::Sink,
};

/// Where namespaced objects without `metadata.namespace` live, as in `kubectl apply`.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Every object compile reads. Order does not matter: compile sorts what it needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterState {
    pub ingresses: Vec<Ingress>,
    pub ingress_classes: Vec<IngressClass>,
    pub services: Vec<Service>,
    pub endpoint_slices: Vec<EndpointSlice>,
    /// Not read yet: TLS comes later.
    pub secrets: Vec<Secret>,
}

/// Which Ingresses are ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// IngressClasses with this `spec.controller` are ours.
    pub controller_name: String,
    /// Class names that are ours even without an IngressClass object.
    pub ingress_classes: Vec<String>,
    /// Serve Ingresses that name no class even when no IngressClass of ours is the default.
    pub watch_ingress_without_class: bool,
    /// Classes served in shadow: routed, but their status is never written.
    pub shadow_classes: Vec<String>,
}

/// The result of one compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub table: TableSpec,
    /// In precedence order of the Ingresses, then rule order.
    pub diagnostics: Vec<Diagnostic>,
    /// Every selected Ingress, sorted by namespace and name, even those that contributed nothing.
    pub served: Vec<ServedIngress>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ServedIngress {
    pub namespace: String,
    pub name: String,
    /// Selected only through `shadow_classes`: never write its status.
    pub shadow: bool,
}

/// Compiles the Ingresses this controller serves into a route table.
///
/// Precedence: older Ingresses (by `creationTimestamp`, missing last, then namespace and name)
/// claim a host + path first; later claimants get a [`Reason::Conflict`] diagnostic.
pub fn compile(state: &ClusterState, options: &CompileOptions) -> Compiled {
    let classes = Classes::new(&state.ingress_classes, options);
    let mut selected: Vec<(&Ingress, Selection)> =
        state.ingresses.iter().filter_map(|ingress| Some((ingress, classes.select(ingress)?))).collect();
    selected.sort_by(|(a, _), (b, _)| precedence(&a.metadata).cmp(&precedence(&b.metadata)));

    let mut sink = Sink { backends: backend::Backends::new(state), table: Default::default(), diagnostics: Vec::new() };
    for (ingress, _) in &selected {
        ingress::compile_ingress(ingress, &mut sink);
    }

    let mut served: Vec<ServedIngress> = selected
        .iter()
        .map(|(ingress, selection)| {
            let (namespace, name) = namespace_name(&ingress.metadata);
            ServedIngress { namespace: namespace.into(), name: name.into(), shadow: *selection == Selection::Shadow }
        })
        .collect();
    served.sort();
    Compiled { table: sink.table.finish(), diagnostics: sink.diagnostics, served }
}

/// Sort key: created first wins; objects without a timestamp (hand-written manifests) go last.
fn precedence(meta: &ObjectMeta) -> impl Ord + '_ {
    let created = meta.creation_timestamp.as_ref();
    (created.is_none(), created, namespace_name(meta))
}

fn namespace_name(meta: &ObjectMeta) -> (&str, &str) {
    (meta.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE), meta.name.as_deref().unwrap_or_default())
}

// === impl CompileOptions ===

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            controller_name: "shunt.dev/ingress-controller".to_string(),
            ingress_classes: vec!["shunt".to_string()],
            watch_ingress_without_class: false,
            shadow_classes: Vec::new(),
        }
    }
}
