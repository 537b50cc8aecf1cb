//! What an incremental compile reads of the next state, so `shunt serve` decodes only that.
//!
//! ```text
//! changes + the changed objects ─reads─▶ Reads { Ingresses, Services, slices by key }
//!   kept manifest files ─decode one file at a time, keep what Reads wants─▶ partial ClusterState ─▶ compile_changes
//! ```
//! A whole decoded state is ~19 MiB at 10k Ingresses, allocated and freed at every edit next to
//! the table's long-lived allocations; the part an edit reads is a few objects. The partial
//! state holds: the Ingresses to redo and those with `spec.tls` (the TLS walk reads them), the
//! Services and slices their backends name, the changed slices, every IngressClass and Secret.

use std::collections::{HashMap, HashSet};

use crate::objects::{Ingress, MetaNames};
use k8s_openapi::api::networking::v1::IngressTLS;

use super::{Changes, Incremental, Key, Plan, backend_services, index, key_of, service_of};
use crate::{
    compile::{ClusterState, CompileOptions, namespace_name},
    objects::{EndpointSlice, Service},
};

/// The objects an incremental compile of some changes reads, by namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    ingresses: KeySet,
    /// Services, and the slices labelled with them.
    services: KeySet,
    endpoint_slices: KeySet,
}

/// Keys by namespace, then name: looked up by borrowed names, since a lookup runs for every
/// object of every decoded file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct KeySet(HashMap<String, HashSet<String>>);

// === impl Reads ===

impl Reads {
    pub fn wants_ingress(&self, ingress: &Ingress) -> bool {
        let tls = ingress.spec.as_ref().and_then(|spec| spec.tls.as_deref());
        self.wants_ingress_named(&ingress.metadata, tls)
    }

    /// [`Self::wants_ingress`] from the parts it reads, whichever Ingress type holds them.
    pub fn wants_ingress_named(&self, meta: &impl MetaNames, tls: Option<&[IngressTLS]>) -> bool {
        let has_tls = tls.is_some_and(|tls| !tls.is_empty());
        has_tls || self.ingresses.contains(namespace_name(meta))
    }

    pub fn wants_service(&self, service: &Service) -> bool {
        self.services.contains(namespace_name(&service.metadata))
    }

    pub fn wants_slice(&self, slice: &EndpointSlice) -> bool {
        let (namespace, name) = namespace_name(&slice.metadata);
        self.endpoint_slices.contains((namespace, name))
            || slice
                .service_name
                .as_deref()
                .is_some_and(|service| self.services.contains((namespace, service)))
    }

    /// The part of `state` these reads want, in the same order; IngressClasses, Secrets and ConfigMaps whole.
    pub fn keep(&self, state: &ClusterState) -> ClusterState {
        ClusterState {
            ingresses: state
                .ingresses
                .iter()
                .filter(|o| self.wants_ingress(o))
                .cloned()
                .collect(),
            ingress_classes: state.ingress_classes.clone(),
            services: state
                .services
                .iter()
                .filter(|o| self.wants_service(o))
                .cloned()
                .collect(),
            endpoint_slices: state
                .endpoint_slices
                .iter()
                .filter(|o| self.wants_slice(o))
                .cloned()
                .collect(),
            secrets: state.secrets.clone(),
            config_maps: state.config_maps.clone(),
            gateway_classes: state.gateway_classes.clone(),
            gateways: state.gateways.clone(),
            http_routes: state.http_routes.clone(),
            grpc_routes: state.grpc_routes.clone(),
            reference_grants: state.reference_grants.clone(),
            tke_service_configs: state.tke_service_configs.clone(),
            namespaces: state.namespaces.clone(),
            secrets_listed: state.secrets_listed,
            secret_names: state.secret_names.clone(),
        }
    }
}

// === impl KeySet ===

impl KeySet {
    fn contains(&self, (namespace, name): (&str, &str)) -> bool {
        self.0.get(namespace).is_some_and(|names| names.contains(name))
    }
}

impl FromIterator<Key> for KeySet {
    fn from_iter<I: IntoIterator<Item = Key>>(keys: I) -> Self {
        let mut set = KeySet::default();
        for (namespace, name) in keys {
            set.0.entry(namespace).or_default().insert(name);
        }
        set
    }
}

// === impl Incremental ===

impl Incremental {
    /// What [`Incremental::compile_changes`] reads of the next state, given `changes` and
    /// `changed`: at least the objects `changes` names, as they are now (the caller's changed
    /// files). `None` when it compiles everything (and so reads everything).
    ///
    /// A partial state built from these reads compiles to what the whole state would, unless
    /// [`Reads::suffices`] says otherwise.
    pub fn reads(&self, options: &CompileOptions, changes: &Changes, changed: &ClusterState) -> Option<Reads> {
        let Plan::Redo {
            ingresses, services, ..
        } = self.plan(options, changes, &changed.endpoint_slices)
        else {
            return None;
        };
        // The Gateway API layer is compiled whole, from every route and the Services they name.
        if self.gateway.is_some() || crate::sources::gateway::has_objects(changed) {
            return None;
        }
        // A changed Ingress names what its new object names; an unchanged one what its kept
        // contribution resolved (the walk resolves each backend whatever the others resolve to).
        // The changed Services too (with their slices), though only their users' names matter.
        let services_before = services.clone();
        let mut named: HashSet<Key> = services.into_iter().collect();
        for ingress in &changed.ingresses {
            if changes.ingresses.contains(&key_of(&ingress.metadata)) {
                named.extend(backend_services(ingress).map(|(ns, name)| (ns.to_string(), name.to_string())));
            }
        }
        for key in ingresses.iter().filter(|key| !changes.ingresses.contains(*key)) {
            if let Some(entry) = self.entries.get(key) {
                let namespace = &entry.rank.key.0;
                named.extend((entry.services.iter()).map(|name| (namespace.clone(), name.to_string())));
            }
        }
        // The profiles' host groups to compile again, and what their kept members name.
        let now: HashMap<Key, &Ingress> = (changed.ingresses.iter())
            .map(|ingress| (key_of(&ingress.metadata), &**ingress))
            .collect();
        let profile_redo = self.profile_redo(&changes.ingresses, &ingresses, &services_before, |key| {
            now.get(key).copied()
        });
        let unchanged = profile_redo
            .iter()
            .filter(|key| !changes.ingresses.contains(*key))
            .cloned()
            .collect();
        named.extend(self.profiles.services_of(&unchanged).cloned());
        // Where the nginx profile's error pages go when no annotation names a Service.
        named.extend(options.shadow.nginx_default_backend.iter().cloned());
        Some(Reads {
            ingresses: ingresses.into_iter().chain(profile_redo).collect(),
            services: named.into_iter().collect(),
            endpoint_slices: changes.endpoint_slices.iter().cloned().collect(),
        })
    }
}

impl Reads {
    /// Whether `partial`, the objects these reads want, compiles as the whole state would.
    /// False when it holds two Ingresses with one namespace and name (the compile then falls
    /// back to the full one), or when one of the objects to redo names a Service these reads
    /// left out: the same object in two files, where the one compile sees is not the changed one
    /// these reads were worked out from.
    pub fn suffices(&self, partial: &ClusterState) -> bool {
        let redone = partial
            .ingresses
            .iter()
            .filter(|ingress| self.ingresses.contains(namespace_name(&ingress.metadata)));
        let mut named = redone.flat_map(|ingress| backend_services(ingress));
        let mut labelled = partial
            .endpoint_slices
            .iter()
            .filter(|slice| self.endpoint_slices.contains(namespace_name(&slice.metadata)))
            .filter_map(|slice| service_of(slice));
        named.all(|service| self.services.contains(service))
            && labelled.all(|(namespace, name)| self.services.contains((&namespace, &name)))
            && index(&partial.ingresses).is_some()
    }
}
