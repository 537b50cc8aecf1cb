//! The incremental compile: the same [`Compiled`] as [`compile`], redoing only the Ingresses
//! whose inputs changed and only the hosts their claims touch.
//!
//! ```text
//! changes ─plan─▶ Everything (reset, then apply every Ingress) | Redo (these Ingresses)
//!   apply: forget their old claims, walk them again ─▶ contributions (kept)
//!   hosts touched ─settle: HostSlots, claims in precedence order─▶ kept VirtualHostSpecs, who lost to whom
//!   Ingresses whose claims won or lost differently ─▶ diagnostics again ─▶ Compiled
//! ```
//! An Ingress's contribution (its events: reports, claims with resolved backends) depends only
//! on the Ingress, its class selection, the options and the Services (with their EndpointSlices)
//! it names, so those are its keys. Whether a claim wins depends on the earlier claims of its
//! host, so a touched host is settled again from all its claims, by the rule the full compile
//! uses ([`HostSlots`](super::claims::HostSlots)). TLS is walked whole on each compile (it needs
//! `now`, and only Ingresses with `spec.tls` take part). [`plan`] says when everything is
//! applied again, and when the full compile serves instead.

use crate::objects::Ingress;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
    sync::Arc,
};

use shunt_proxy::publish::SpecChanges;
use shunt_spec::{BackendId, BackendSpec, HostMatch, TableSpec};

mod apply;
mod diff;
mod gateway;
mod hosts;
mod plan;
mod profiles;
mod rank;
mod reads;
mod settle;
mod slices;

pub use self::reads::Reads;
use self::{
    diff::Seen,
    hosts::HostSpecs,
    plan::Plan,
    profiles::{GroupInputs, Profiles},
    rank::{ByKey, Rank},
    settle::{HeldBackends, Touched},
    slices::SliceServices,
};
use super::{
    ClusterState, CompileOptions, Compiled, Diagnostic, ServedIngress,
    backend::{Backends, Resolved},
    class::Classes,
    compile, default_certificate_error,
    ingress::Event,
    namespace_name,
    tls::TlsBuilder,
};
use crate::{
    objects::{EndpointSlice, MetaNames},
    shadow::ProfileConfig,
    sources::gateway::Layer,
};

/// Namespace and name.
pub type Key = (String, String);

/// What changed since the previous compile, by namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Unknown or too much: compile everything again.
    pub everything: bool,
    pub ingress_classes: bool,
    pub ingresses: BTreeSet<Key>,
    pub services: BTreeSet<Key>,
    pub endpoint_slices: BTreeSet<Key>,
}

/// Keeps what the last compile found, to compile the next state from it.
#[derive(Default)]
pub struct Incremental {
    /// The last compile's options without `now`; `None` until a compile went through here (and
    /// after a fallback): then the next one does all.
    options: Option<CompileOptions>,
    /// Boxed: a hash table keeps ~40% of its buckets empty, and an `Entry` is 112 B. Keyed by
    /// the entry's rank, which holds its name. Which Ingresses name a Service is found by
    /// scanning these (a changed Service or slice, ~0.3 ms at 10k): an index of it cost ~1 MiB.
    entries: HashMap<ByKey, Box<Entry>>,
    /// EndpointSlice to the name of the Service its label names (in the slice's namespace).
    slice_services: SliceServices,
    /// Two slices with one namespace and name (manifests can hold both; the API cannot): the
    /// map above keeps one Service per name, so compiles do all until they are gone.
    duplicate_slices: bool,
    /// Each host's claims in precedence order, as one set for the same reason.
    claims: BTreeSet<(HostMatch, Attempt)>,
    /// What the table holds for each host some claim won; the table shares each `Arc`, so a
    /// host is held once between compiles.
    hosts: HostSpecs,
    /// Claims on the default backend; the first holds it.
    defaults: BTreeSet<Attempt>,
    default_backend: Option<Arc<Resolved>>,
    /// Backends of the claims that won, with how many hold each.
    backends: HeldBackends,
    /// The previous state's objects by address, for [`Incremental::compile`]'s diff.
    seen: Seen,
    /// The hosts and backends the last compile changed, unless it compiled everything.
    spec_changes: Option<SpecChanges>,
    /// Entries with diagnostics or `spec.tls`: the only ones `finish` looks at.
    notable: BTreeSet<Arc<Rank>>,
    /// How many entries have `spec.tls`.
    tls: usize,
    /// `Compiled::served`, redone when an Ingress comes or goes.
    served: Option<Vec<ServedIngress>>,
    /// The Ingresses of profiles that compile their own (qcloud, nginx), by host group.
    profiles: Profiles,
    /// The Gateway API layer of the last compile, compiled whole each time (see
    /// `sources/gateway`); kept to tell the publisher which of its hosts and backends changed.
    gateway: Option<Layer>,
}

/// A claim: the claiming Ingress and the index of its event.
type Attempt = (Arc<Rank>, usize);

/// One selected Ingress.
struct Entry {
    rank: Arc<Rank>,
    shadow: bool,
    /// Its contribution's events; boxed slices, kept until the Ingress changes.
    events: Box<[Event]>,
    /// The names of the Services its backends name, all in its namespace (the rank's).
    services: Box<[Box<str>]>,
    /// Per event: who holds the slot it claimed (`namespace/name`), `None` when it won (or is
    /// no claim); empty while every claim won, as nearly all do.
    holders: Vec<Option<String>>,
    has_tls: bool,
    /// Settled diagnostics of its events (TLS ones are added at each compile).
    diagnostics: Vec<Diagnostic>,
}

// === impl Entry ===

impl Entry {
    /// Who holds the slot event `index` claimed; `None` when it won.
    fn holder(&self, index: usize) -> Option<&str> {
        self.holders.get(index)?.as_deref()
    }

    /// Records who holds event `index`'s slot; whether that changed.
    fn set_holder(&mut self, index: usize, holder: Option<String>) -> bool {
        if self.holder(index) == holder.as_deref() {
            return false;
        }
        if self.holders.is_empty() {
            self.holders = vec![None; self.events.len()];
        }
        self.holders[index] = holder;
        if self.holders.iter().all(Option::is_none) {
            self.holders = Vec::new();
        }
        true
    }
}

// === impl Incremental ===

impl Incremental {
    /// Compiles `state`, given what changed since the previous call (`shunt serve`, which knows
    /// which objects its files changed, and keeps no objects between compiles).
    pub fn compile_changes(&mut self, state: &ClusterState, options: &CompileOptions, changes: &Changes) -> Compiled {
        let plan = self.plan(options, changes, &state.endpoint_slices);
        let config = ProfileConfig::find(options, state);
        // The Ingresses by name, to redo some or walk TLS; a duplicate name comes with a change.
        let index = match &plan {
            Plan::Redo { ingresses, .. } if ingresses.is_empty() && self.tls == 0 && self.profiles.is_empty() => {
                Some(Index::default())
            }
            _ => index(&state.ingresses),
        };
        let Some(index) = index else {
            self.reset();
            return compile(state, options);
        };
        let everything = matches!(plan, Plan::Everything);
        let (redo, profile_redo) = match plan {
            Plan::Redo {
                ingresses,
                services,
                labelled,
            } => {
                self.track_slices(changes, labelled);
                let now = |(namespace, name): &Key| index.get(&(namespace.as_str(), name.as_str())).copied();
                let mut profile_redo = self.profile_redo(&changes.ingresses, &ingresses, &services, now);
                if self.profiles.config_changed(&config) {
                    profile_redo.extend(self.profiles.keys().cloned());
                }
                (ingresses, profile_redo)
            }
            Plan::Everything => {
                let all = self.restart(state, options, &index);
                (all.clone(), all)
            }
        };
        let mut touched = Touched::default();
        let classes = Classes::new(&state.ingress_classes, options);
        // Indexing the Services looks at each of the cluster's: not when nothing is redone.
        let mut backends = (!redo.is_empty() || !profile_redo.is_empty()).then(|| {
            if everything {
                Backends::new(state)
            } else {
                let mut named = named_services(&redo, &index);
                named.extend(named_services(&profile_redo, &index));
                Backends::only(state, &named)
            }
        });
        if let Some(backends) = backends.as_mut()
            && !redo.is_empty()
        {
            self.apply(redo, &index, &classes, backends, &mut touched);
        }
        if profile_redo.is_empty() {
            // Its index of every Service and slice is done with: not alive at the startup
            // compile's peak, which settling reaches (~3 MiB at 10k).
            backends = None;
        }
        let mut spec_changes = self.settle(touched);
        let mut certificates = TlsBuilder::new(state, options.now);
        let diagnostics = self.walk_tls(&mut certificates, &index);
        if !profile_redo.is_empty() {
            let inputs = GroupInputs {
                index: &index,
                classes: &classes,
                backends,
                certificates: &mut certificates,
                options,
                config: &config,
            };
            self.compile_profiles(&profile_redo, inputs, &mut spec_changes);
        }
        self.spec_changes = (!everything).then_some(spec_changes);
        self.finish(state, options, certificates, diagnostics)
    }

    /// The hosts and backends the last compile changed in the table, unless it compiled
    /// everything: what [`shunt_proxy::publish::RoutePublisher::publish_changed`] needs.
    pub fn spec_changes(&self) -> Option<&SpecChanges> {
        self.spec_changes.as_ref()
    }

    /// Forgets everything kept but the objects seen: the next compile applies every Ingress.
    fn reset(&mut self) {
        let seen = std::mem::take(&mut self.seen);
        *self = Incremental {
            seen,
            ..Default::default()
        };
    }

    /// Resets for `options` and `state`'s slices; returns every Ingress to apply.
    fn restart(&mut self, state: &ClusterState, options: &CompileOptions, index: &Index<'_>) -> BTreeSet<Key> {
        self.reset();
        self.options = Some(plan::kept(options));
        let labelled = (state.endpoint_slices.iter()).filter_map(|slice| {
            let service = slice.service_name.as_deref()?;
            Some((namespace_name(&slice.metadata), service))
        });
        (self.slice_services, self.duplicate_slices) = SliceServices::new(labelled);
        // Sized once: growing by doubling keeps the last tables alive through the first compile.
        self.entries.reserve(index.len());
        index
            .keys()
            .map(|(ns, name)| (ns.to_string(), name.to_string()))
            .collect()
    }

    /// The Ingresses naming one of `services`, by key: every entry is looked at (a few
    /// hundred microseconds at 10k), where an index by Service cost ~1 MiB.
    fn users_of<'s>(&'s self, services: &BTreeSet<Key>) -> Vec<&'s Key> {
        let services: HashSet<(&str, &str)> = (services.iter())
            .map(|(namespace, name)| (namespace.as_str(), name.as_str()))
            .collect();
        let names = |entry: &'s Entry| {
            let namespace = entry.rank.key.0.as_str();
            (entry.services.iter()).any(|name| services.contains(&(namespace, &**name)))
        };
        (self.entries.iter())
            .filter(|(_, entry)| names(entry))
            .map(|(key, _)| &key.0.key)
            .collect()
    }

    /// The standard layer's diagnostics with its TLS walk's, in precedence order.
    fn walk_tls(&self, certificates: &mut TlsBuilder<'_>, index: &Index<'_>) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        for rank in &self.notable {
            let Some(entry) = self.entries.get(&rank.key) else {
                continue;
            };
            diagnostics.extend(entry.diagnostics.iter().cloned());
            if entry.has_tls
                && let Some(ingress) = index.get(&(rank.key.0.as_str(), rank.key.1.as_str()))
            {
                certificates.ingress(ingress, &mut diagnostics);
            }
        }
        diagnostics
    }

    /// The result, from what is kept: the standard layer's, then the profiles'.
    fn finish(
        &mut self,
        state: &ClusterState,
        options: &CompileOptions,
        mut certificates: TlsBuilder<'_>,
        mut diagnostics: Vec<Diagnostic>,
    ) -> Compiled {
        diagnostics.extend(self.profiles.diagnostics().cloned());
        let served = self.served().to_vec();
        let default_certificate_error = default_certificate_error(&mut certificates, options);
        let mut backends: BTreeMap<BackendId, BackendSpec> = self
            .backends
            .keys()
            .map(|held| (held.0.id.clone(), held.0.spec.clone()))
            .collect();
        for (id, spec) in self.profiles.backends() {
            if !backends.contains_key(id) {
                backends.insert(id.clone(), spec.clone());
            }
        }
        let (shadow, shadow_ingresses, report) =
            match self.profiles.is_empty() && crate::shadow::served_profiles(options).is_none() {
                true => (Arc::from([]), Arc::from([]), None),
                false => self.profiles.shadow(options),
            };
        let mut table = TableSpec {
            hosts: self.profiles.merge_hosts(&self.hosts),
            default_backend: self.default_backend.as_ref().map(|backend| backend.id.clone()),
            backends,
            tls: Default::default(),
            documents: Default::default(),
            ports: Default::default(),
        };
        if let Some(report) = report {
            table.documents.insert("shadow".to_string(), report);
        }
        self.gateway_layer(
            state,
            &options.shadow_gateway_classes,
            &mut table,
            &mut certificates,
            &options.gateway_ports,
        );
        table.tls = certificates.finish();
        Compiled {
            table,
            diagnostics,
            served,
            default_certificate_error,
            shadow,
            shadow_ingresses,
            gateway: self.gateway.as_ref().map(|layer| layer.status.clone()),
            shadow_gateway: (self.gateway.as_ref())
                .map_or_else(|| Arc::from([]), |layer| layer.shadow.as_slice().into()),
        }
    }

    /// `Compiled::served`, sorted once per Ingress coming or going.
    fn served(&mut self) -> &[ServedIngress] {
        let entries = &self.entries;
        let profiles = &self.profiles;
        self.served.get_or_insert_with(|| {
            let standard = entries.iter().map(|(key, entry)| (&key.0.key, entry.shadow));
            let mut served: Vec<ServedIngress> = standard
                .chain(profiles.served())
                .map(|((namespace, name), shadow)| ServedIngress {
                    namespace: namespace.clone(),
                    name: name.clone(),
                    shadow,
                })
                .collect();
            served.sort();
            served
        })
    }
}

/// foldhash: every Ingress of the cluster is hashed into it on each compile that redoes some.
type Index<'s> = HashMap<(&'s str, &'s str), &'s Ingress, foldhash::fast::RandomState>;

/// Ingresses by namespace and name; `None` when two share both (the full compile handles those).
fn index(ingresses: &[Arc<Ingress>]) -> Option<Index<'_>> {
    let mut index = Index::with_capacity_and_hasher(ingresses.len(), Default::default());
    for ingress in ingresses {
        if index.insert(namespace_name(&ingress.metadata), &**ingress).is_some() {
            return None;
        }
    }
    Some(index)
}

fn has_tls(ingress: &Ingress) -> bool {
    ingress
        .spec
        .as_ref()
        .is_some_and(|spec| spec.tls.as_ref().is_some_and(|tls| !tls.is_empty()))
}

/// The Services (namespace, name) the backends of the `redo` Ingresses name.
fn named_services<'s>(redo: &BTreeSet<Key>, index: &Index<'s>) -> HashSet<(&'s str, &'s str)> {
    let mut named = HashSet::new();
    for (namespace, name) in redo {
        if let Some(&ingress) = index.get(&(namespace.as_str(), name.as_str())) {
            named.extend(backend_services(ingress));
        }
    }
    named
}

/// The Services (namespace, name) `ingress`'s backends name.
fn backend_services(ingress: &Ingress) -> impl Iterator<Item = (&str, &str)> {
    let (namespace, _) = namespace_name(&ingress.metadata);
    let spec = ingress.spec.as_ref();
    let paths = spec
        .and_then(|spec| spec.rules.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|rule| rule.http.iter().flat_map(|http| &http.paths));
    let backends = spec
        .and_then(|spec| spec.default_backend.as_deref())
        .into_iter()
        .chain(paths.map(|path| &path.backend));
    // ingress-nginx's `default-backend` annotation names a Service answering error pages.
    let annotated = (ingress.metadata.annotations.as_ref())
        .and_then(|annotations| annotations.get("nginx.ingress.kubernetes.io/default-backend"))
        .map(|name| name.trim());
    // A backend without a Service name resolves nothing (as in the walk).
    backends
        .filter_map(|backend| backend.service.as_ref())
        .map(|service| &*service.name)
        .chain(annotated)
        .filter(|name| !name.is_empty())
        .map(move |name| (namespace, name))
}

fn key_of(meta: &impl MetaNames) -> Key {
    let (namespace, name) = namespace_name(meta);
    (namespace.to_string(), name.to_string())
}

fn source((namespace, name): &Key) -> String {
    format!("{namespace}/{name}")
}

fn service_of(slice: &EndpointSlice) -> Option<Key> {
    let service = slice.service_name.as_deref()?;
    let (namespace, _) = namespace_name(&slice.metadata);
    Some((namespace.to_string(), service.to_string()))
}

#[cfg(test)]
impl Incremental {
    /// The backend of `key`'s first claim, to tell a kept contribution from a redone one.
    pub(super) fn first_backend(&self, key: &Key) -> Option<*const Resolved> {
        let entry = self.entries.get(key)?;
        entry.events.iter().find_map(|event| match event {
            Event::Path(claim) => claim.backend.as_ref().map(Arc::as_ptr),
            Event::Default(backend) => Some(Arc::as_ptr(backend)),
            Event::Report(_) => None,
        })
    }
}
