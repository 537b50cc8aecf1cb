//! The pure heart of the controller: cluster objects in, a route table and diagnostics out.
//! No I/O, no clock, no `Client`: watchers and standalone manifests both call [`compile`], and
//! equal input gives an equal table.
//!
//! ```text
//! ClusterState ─class─▶ selected Ingresses ─sort: precedence─▶ each rule and path (ingress)
//!     │                                                         ├─ host, path: paths
//!     └ Services, EndpointSlices ─────────────────────────────▶ ├─ backend: backend
//!                                                               └─▶ PathClaim ─first claim wins: claims─▶ table
//! Compiled { table: TableSpec, diagnostics, served, shadow }
//! ```
//! The incremental compile ([`Incremental`]) keeps each Ingress's claims and settles the hosts
//! an edit touches by the same rule ([`claims`]), so it gives what [`compile`] gives. A route
//! option travels on the claim ([`RouteSettings`]) from the annotation that sets it to the table.
//!
//! Shadowed Ingresses of a profile with semantics of its own (qcloud) skip the Ingress-spec
//! walk: [`crate::shadow`] compiles them with their profile, after the others, into the same
//! table, and returns a verdict per host.

mod annotations;
mod backend;
mod claims;
mod class;
mod diagnostics;
mod incremental;
mod ingress;
pub(crate) mod paths;
mod table;
mod tls;

#[cfg(test)]
mod tests;

use crate::objects::{Ingress, IngressMeta};
use std::{collections::BTreeSet, sync::Arc};

use k8s_openapi::{
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::IngressClass,
    },
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kube::core::PartialObjectMeta;
use serde::Serialize;
use shunt_spec::TableSpec;

use crate::{
    objects::{EndpointSlice, MetaNames, Namespace, Service, TkeServiceConfig},
    shadow::{HostVerdict, IngressVerdict, ProfileConfig, ShadowOptions, Shadowed},
    sources::gateway::{
        self,
        grpc::objects::GRPCRoute,
        objects::{Gateway, GatewayClass, HTTPRoute, ReferenceGrant},
    },
};

use self::class::{Classes, Selection};

// The same host parser checks `--dns-exclude` and `--dns-domain` (dns/).
pub use self::paths::{HostError, parse_host};

// What a shadow profile (crate::shadow) compiles with.
pub(crate) use self::{
    backend::{Backends, Resolved},
    claims::{PathClaim, RouteSettings},
    ingress::Sink,
    tls::{CertId, SecretLookup, TlsBuilder},
};

pub use self::{
    class::{Profile, ShadowClass},
    diagnostics::{Diagnostic, Reason},
    incremental::{Changes, Incremental, Reads},
};

/// Where namespaced objects without `metadata.namespace` live, as in `kubectl apply`.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Every object compile reads. Order does not matter: compile sorts what it needs.
///
/// Objects are shared, not owned: `shunt run` hands compile the reflector stores' own `Arc`s, so
/// a snapshot costs a pointer per object instead of a deep copy of the cluster (48 MiB at 30k
/// objects). Compile only reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterState {
    pub ingresses: Vec<Arc<Ingress>>,
    pub ingress_classes: Vec<Arc<IngressClass>>,
    pub services: Vec<Arc<Service>>,
    pub endpoint_slices: Vec<Arc<EndpointSlice>>,
    /// `kubernetes.io/tls` Secrets named by `spec.tls` or `--default-ssl-certificate`.
    pub secrets: Vec<Arc<Secret>>,
    /// The ConfigMaps a shadow profile reads (`--nginx-configmap`), when they exist.
    pub config_maps: Vec<Arc<ConfigMap>>,
    /// Gateway API objects (`sources::gateway`).
    pub gateway_classes: Vec<Arc<GatewayClass>>,
    pub gateways: Vec<Arc<Gateway>>,
    pub http_routes: Vec<Arc<HTTPRoute>>,
    pub grpc_routes: Vec<Arc<GRPCRoute>>,
    /// `v1` and `v1beta1`.
    pub reference_grants: Vec<Arc<ReferenceGrant>>,
    /// Namespaces (name and labels), read by Gateway listeners that select routes' namespaces by label.
    pub namespaces: Vec<Arc<Namespace>>,
    /// TKE's TkeServiceConfigs, read by the qcloud profile (`tke-service-config`).
    pub tke_service_configs: Vec<Arc<TkeServiceConfig>>,
    /// Every Secret is in `secrets` or `secret_names`, whatever its type: one found in neither
    /// does not exist (manifests hold every Secret; a cluster's watch lists every Secret's name
    /// when a qcloud profile is served).
    pub secrets_listed: bool,
    /// The names of Secrets of any type, their data never read (TKE's certificate ids are in
    /// Opaque Secrets): only where `secrets` does not hold every Secret.
    pub secret_names: Vec<SecretName>,
}

/// A Secret's namespace and name, from a metadata-only watch.
#[derive(Clone, Debug)]
pub struct SecretName(pub Arc<PartialObjectMeta<Secret>>);

impl PartialEq for SecretName {
    fn eq(&self, other: &Self) -> bool {
        namespace_name(&self.0.metadata) == namespace_name(&other.0.metadata)
    }
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
    /// Classes served in shadow: routed (with their profile), but their status is never written.
    pub shadow_classes: Vec<ShadowClass>,
    /// Classes of ours compiled with another profile than the Ingress spec's (`--class-profile`).
    pub class_profiles: Vec<ShadowClass>,
    /// GatewayClasses of another implementation whose Gateways' routes are served in shadow
    /// (`--shadow-gateway-class`): routed, refused when shunt cannot reproduce them, no status.
    pub shadow_gateway_classes: Vec<String>,
    /// What the shadow profiles need besides the Ingresses.
    pub shadow: ShadowOptions,
    /// `--default-ssl-certificate` as (namespace, name).
    pub default_certificate: Option<(String, String)>,
    /// Certificates expired or not yet valid at this instant are refused; `None` skips the
    /// check. The caller's clock, so compile itself stays pure.
    pub now: Option<Timestamp>,
    /// Gateway listener ports other than 80 and 443 that shunt serves (`--gateway-port`).
    pub gateway_ports: BTreeSet<u16>,
}

/// The result of one compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub table: TableSpec,
    /// In precedence order of the Ingresses, then rule order.
    pub diagnostics: Vec<Diagnostic>,
    /// Every selected Ingress, sorted by namespace and name, even those that contributed nothing.
    pub served: Vec<ServedIngress>,
    /// Why `--default-ssl-certificate` cannot be used, if it cannot: the self-signed fallback serves.
    pub default_certificate_error: Option<String>,
    /// A verdict per host of the Ingresses a shadow profile compiles, sorted by host (also `/shadow`).
    /// Each verdict is shared with the incremental compile's kept copy.
    pub shadow: Arc<[Arc<HostVerdict>]>,
    /// Those Ingresses the host verdicts miss (catch-alls, skipped), sorted by Ingress.
    pub shadow_ingresses: Arc<[IngressVerdict]>,
    /// The Gateway API status (`/gateway`), while any Gateway API object exists.
    pub gateway: Option<gateway::GatewayStatus>,
    /// A verdict per host of the shadowed Gateways' routes (`--shadow-gateway-class`), sorted.
    pub shadow_gateway: Arc<[Arc<HostVerdict>]>,
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
    let mut selected: Vec<(&Ingress, Selection)> = state
        .ingresses
        .iter()
        .map(Arc::as_ref)
        .filter_map(|ingress| Some((ingress, classes.select(ingress)?)))
        .collect();
    // Each key made once, not twice per comparison; still a stable sort (ties keep input order).
    selected.sort_by_cached_key(|&(ingress, _)| precedence(&ingress.metadata));

    let mut sink = Sink {
        backends: backend::Backends::new(state),
        table: Default::default(),
        diagnostics: Vec::new(),
    };
    let mut certificates = TlsBuilder::new(state, options.now);
    let mut shadowed = Shadowed::default();
    for (ingress, selection) in &selected {
        if let Selection::Shadow(profile) | Selection::Owned(profile) = selection
            && shadowed.take(ingress, *profile)
        {
            continue;
        }
        ingress::compile_ingress(ingress, &mut sink);
        certificates.ingress(ingress, &mut sink.diagnostics);
    }
    let config = ProfileConfig::find(options, state);
    let verdicts = shadowed.compile(&mut sink, &mut certificates, &options.shadow, &config);
    let shadow: Vec<Arc<HostVerdict>> = verdicts.hosts.into_iter().map(Arc::new).collect();
    let shadow_ingresses = verdicts.ingresses;
    let default_certificate_error = default_certificate_error(&mut certificates, options);

    let mut served: Vec<ServedIngress> = selected
        .iter()
        .map(|(ingress, selection)| {
            let (namespace, name) = namespace_name(&ingress.metadata);
            ServedIngress {
                namespace: namespace.into(),
                name: name.into(),
                shadow: matches!(selection, Selection::Shadow(_)),
            }
        })
        .collect();
    served.sort();
    let mut table = sink.table.finish();
    // After every Ingress: a host an Ingress holds stays the Ingress's.
    let classes = (&options.shadow_gateway_classes[..], &options.gateway_ports);
    let layer = gateway::compile(state, &table, &mut certificates, classes);
    if let Some(layer) = &layer {
        gateway::merge(layer, &mut table);
    }
    table.tls = certificates.finish();
    let (shadow, shadow_ingresses): (Arc<[_]>, Arc<[_]>) = (shadow.into(), shadow_ingresses.into());
    if let Some(report) = crate::shadow::report(options, shadow.clone(), shadow_ingresses.clone()) {
        table.documents.insert("shadow".to_string(), report);
    }
    Compiled {
        table,
        diagnostics: sink.diagnostics,
        served,
        default_certificate_error,
        shadow,
        shadow_ingresses,
        shadow_gateway: (layer.as_ref()).map_or_else(|| Arc::from([]), |layer| layer.shadow.as_slice().into()),
        gateway: layer.map(|layer| layer.status),
    }
}

/// Why `--default-ssl-certificate` cannot serve, if it cannot.
fn default_certificate_error(certificates: &mut TlsBuilder<'_>, options: &CompileOptions) -> Option<String> {
    let (namespace, name) = options.default_certificate.as_ref()?;
    let error = certificates.default_certificate(namespace, name).err()?;
    Some(format!("default certificate {namespace}/{name}: {error}"))
}

/// The order in which Ingresses claim: created first wins; objects without a timestamp
/// (hand-written manifests) go last; then namespace and name.
type Precedence<'m> = (bool, Option<&'m Time>, (&'m str, &'m str));

fn precedence(meta: &IngressMeta) -> Precedence<'_> {
    let created = meta.creation_timestamp.as_ref();
    (created.is_none(), created, namespace_name(meta))
}

pub(crate) fn namespace_name(meta: &impl MetaNames) -> (&str, &str) {
    (
        meta.namespace().unwrap_or(DEFAULT_NAMESPACE),
        meta.name().unwrap_or_default(),
    )
}

// === impl CompileOptions ===

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            controller_name: "shunt.dev/ingress-controller".to_string(),
            ingress_classes: vec!["shunt".to_string()],
            watch_ingress_without_class: false,
            shadow_classes: Vec::new(),
            class_profiles: Vec::new(),
            shadow_gateway_classes: Vec::new(),
            shadow: ShadowOptions::default(),
            default_certificate: None,
            now: None,
            gateway_ports: BTreeSet::new(),
        }
    }
}
