//! The incremental compile: the same [`Compiled`] as [`compile`], redoing only the Ingresses
//! whose inputs changed and only the hosts their claims touch.
//!
//! ```text
//! changes (Ingress, Service, EndpointSlice keys) ─▶ Ingresses to redo ─walk─▶ contributions (kept)
//!                                                        │ their old and new claims
//!                                                        ▼
//!   hosts touched ─settle each in precedence order─▶ kept VirtualHostSpecs, who lost to whom
//!                                                        ▼
//!   Ingresses whose claims won or lost differently ─▶ diagnostics again ─▶ Compiled
//! ```
//! An Ingress's contribution (its events: reports, claims with resolved backends) depends only
//! on the Ingress, its class selection, the options and the Services (with their EndpointSlices)
//! it names, so those are its keys. Whether a claim wins depends on the earlier claims of its
//! host, so a touched host is settled again from all its claims. TLS is walked whole on each
//! compile (it needs `now`, and only Ingresses with `spec.tls` take part). A change of classes or
//! options, two Ingresses with one namespace and name, or a qcloud-profile shadow class fall back
//! to the full compile.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet, btree_map::Entry as MapEntry},
    sync::Arc,
};

use k8s_openapi::{Metadata, api::networking::v1::Ingress, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use shunt_proxy::{
    publish::SpecChanges,
    routes::spec::{BackendId, HostMatch, PathKind, PathSpec, RouteOptions, TableSpec, VirtualHostSpec},
};

mod reads;

pub use self::reads::Reads;

use super::{
    ClusterState, CompileOptions, Compiled, Diagnostic, Profile, ServedIngress,
    backend::{Backends, Resolved},
    class::{Classes, Selection},
    compile, default_certificate_error,
    ingress::{self, Contribution, Event},
    namespace_name,
    tls::TlsBuilder,
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
    /// Boxed: a hash table keeps ~40% of its buckets empty, and an `Entry` is 112 B.
    entries: HashMap<Key, Box<Entry>>,
    /// (Service, Ingress) for each Service an Ingress's backends name. One set, not a set per
    /// Service: at 10k Services a B-tree node each would cost more than everything else here.
    /// The Ingress by its rank (which holds its key): a pointer instead of two more strings.
    users: BTreeSet<(Key, Arc<Rank>)>,
    /// EndpointSlice to the name of the Service its label names (in the slice's namespace).
    slice_services: HashMap<Key, String>,
    /// Two slices with one namespace and name (manifests can hold both; the API cannot): the
    /// map above keeps one Service per name, so compiles do all until they are gone.
    duplicate_slices: bool,
    /// Each host's claims in precedence order, as one set for the same reason.
    claims: BTreeSet<(HostMatch, Attempt)>,
    /// What the table holds for each host some claim won; the table shares each `Arc`, so a
    /// host is held once between compiles.
    hosts: BTreeMap<HostMatch, Arc<VirtualHostSpec>>,
    /// Claims on the default backend; the first holds it.
    defaults: BTreeSet<Attempt>,
    default_backend: Option<Arc<Resolved>>,
    /// Backends of the claims that won, with how many hold each.
    backends: BTreeMap<BackendId, (usize, Arc<Resolved>)>,
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
}

/// Precedence as `compile` sorts: created first, missing timestamps last, then namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    missing: bool,
    created: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    key: Key,
}

impl Rank {
    /// Orders before every other rank: where a range over one host's claims or one Service's
    /// users starts.
    const FIRST: Rank = Rank {
        missing: false,
        created: None,
        key: (String::new(), String::new()),
    };
}

/// A claim: the claiming Ingress and the index of its event.
type Attempt = (Arc<Rank>, usize);

/// One selected Ingress.
struct Entry {
    rank: Arc<Rank>,
    shadow: bool,
    contribution: Contribution,
    /// Per event: who holds the slot it claimed (`namespace/name`), `None` when it won (or is no claim).
    holders: Vec<Option<String>>,
    has_tls: bool,
    /// Settled diagnostics of its events (TLS ones are added at each compile).
    diagnostics: Vec<Diagnostic>,
}

/// Objects of the previous state by address; kept alive so an address is not reused meanwhile.
#[derive(Default)]
struct Seen {
    ingresses: Vec<Arc<Ingress>>,
    classes: Vec<Arc<k8s_openapi::api::networking::v1::IngressClass>>,
    services: Vec<Arc<crate::objects::Service>>,
    slices: Vec<Arc<crate::objects::EndpointSlice>>,
}

// === impl Incremental ===

impl Incremental {
    /// Compiles `state`, finding what changed by comparing its objects' addresses with the
    /// previous state's (`shunt run`: the reflector stores keep an unchanged object's `Arc`).
    pub fn compile(&mut self, state: &ClusterState, options: &CompileOptions) -> Compiled {
        let mut changes = Changes {
            ingress_classes: !diff(&mut self.seen.classes, &state.ingress_classes, &mut BTreeSet::new()),
            ..Default::default()
        };
        diff(&mut self.seen.ingresses, &state.ingresses, &mut changes.ingresses);
        diff(&mut self.seen.services, &state.services, &mut changes.services);
        diff(
            &mut self.seen.slices,
            &state.endpoint_slices,
            &mut changes.endpoint_slices,
        );
        self.compile_changes(state, options, &changes)
    }

    /// Compiles `state`, given what changed since the previous call (`shunt serve`, which knows
    /// which objects its files changed, and keeps no objects between compiles).
    pub fn compile_changes(&mut self, state: &ClusterState, options: &CompileOptions, changes: &Changes) -> Compiled {
        let qcloud = options
            .shadow_classes
            .iter()
            .any(|class| class.profile == Profile::Qcloud);
        let mut kept_options = options.clone();
        kept_options.now = None;
        let everything = changes.everything
            || changes.ingress_classes
            || self.duplicate_slices
            || self.options.as_ref() != Some(&kept_options);
        let redo = (!everything).then(|| self.redo(state, changes));
        // The Ingresses by name, to redo some or walk TLS; a duplicate name comes with a change.
        let index = if redo.as_ref().is_none_or(|redo| !redo.is_empty()) || self.tls > 0 {
            index(&state.ingresses)
        } else {
            Some(Index::default())
        };
        let Some(index) = index.filter(|_| !qcloud) else {
            self.reset();
            self.spec_changes = None;
            return compile(state, options);
        };
        let redo = redo.unwrap_or_else(|| {
            self.reset();
            self.options = Some(kept_options);
            for slice in &state.endpoint_slices {
                if let Some(service) = &slice.service_name {
                    let service = service.to_string();
                    self.duplicate_slices |= self.slice_services.insert(key_of(slice.metadata()), service).is_some();
                }
            }
            index
                .keys()
                .map(|(ns, name)| (ns.to_string(), name.to_string()))
                .collect()
        });

        let classes = Classes::new(&state.ingress_classes, options);
        let mut touched = Touched::default();
        if !redo.is_empty() {
            let mut backends = if everything {
                Backends::new(state)
            } else {
                Backends::only(state, &named_services(&redo, &index))
            };
            for key in redo {
                let was = self.entries.remove(&key).map(|old| {
                    let shadow = old.shadow;
                    self.forget(&old, &mut touched);
                    shadow
                });
                let selected = index
                    .get(&(key.0.as_str(), key.1.as_str()))
                    .and_then(|&ingress| Some((ingress, classes.select(ingress)?)));
                // `served` lists the entries and their shadow flags: an Ingress edited in place
                // keeps it (rebuilding it sorted 10k names per edit).
                if was != selected.map(|(_, selection)| matches!(selection, Selection::Shadow(_))) {
                    self.served = None;
                }
                let Some((ingress, selection)) = selected else {
                    continue;
                };
                let contribution = ingress::contribution(ingress, &mut backends);
                self.add(key, ingress, selection, contribution, &mut touched);
            }
        }
        let mut spec_changes = SpecChanges::default();
        for host in &touched.hosts {
            self.settle_host(host, &mut touched.settle, &mut spec_changes.backends);
        }
        if touched.default {
            self.settle_default(&mut touched.settle, &mut spec_changes.backends);
        }
        spec_changes.hosts = touched.hosts;
        self.spec_changes = (!everything).then_some(spec_changes);
        for key in &touched.settle {
            if let Some(entry) = self.entries.get_mut(key) {
                entry.diagnostics.clear();
                let holders = &entry.holders;
                ingress::settle(
                    (&key.0, &key.1),
                    &entry.contribution.events,
                    |index| holders[index].as_deref(),
                    &mut entry.diagnostics,
                );
                if entry.has_tls || !entry.diagnostics.is_empty() {
                    self.notable.insert(entry.rank.clone());
                } else {
                    self.notable.remove(&entry.rank);
                }
            }
        }
        self.finish(state, options, &index)
    }

    /// The hosts and backends the last compile changed in the table, unless it compiled
    /// everything: what [`shunt_proxy::publish::RoutePublisher::publish_changed`] needs.
    pub fn spec_changes(&self) -> Option<&SpecChanges> {
        self.spec_changes.as_ref()
    }

    fn reset(&mut self) {
        let seen = std::mem::take(&mut self.seen);
        *self = Incremental {
            seen,
            ..Default::default()
        };
    }

    /// The Ingresses that changed, and those naming a Service whose object or slices changed.
    fn redo(&mut self, state: &ClusterState, changes: &Changes) -> BTreeSet<Key> {
        let mut redo = changes.ingresses.clone();
        let mut services = changes.services.clone();
        if !changes.endpoint_slices.is_empty() {
            for key in &changes.endpoint_slices {
                services.extend(self.slice_services.remove(key).map(|service| (key.0.clone(), service)));
            }
            let mut named = BTreeSet::new();
            for slice in &state.endpoint_slices {
                let key = key_of(slice.metadata());
                if changes.endpoint_slices.contains(&key)
                    && let Some(service) = service_of(slice)
                {
                    services.insert(service.clone());
                    // Both Services are redone now; the map can keep only one for later.
                    self.duplicate_slices |= !named.insert(key.clone());
                    self.slice_services.insert(key, service.1);
                }
            }
        }
        let first = Arc::new(Rank::FIRST);
        for service in &services {
            let from = (service.clone(), first.clone());
            let users = self.users.range(from..).take_while(|(named, _)| named == service);
            redo.extend(users.map(|(_, ingress)| ingress.key.clone()));
        }
        redo
    }

    /// Takes `old`'s claims and Service uses out.
    fn forget(&mut self, old: &Entry, touched: &mut Touched) {
        for (index, event) in old.contribution.events.iter().enumerate() {
            let attempt = (old.rank.clone(), index);
            match event {
                Event::Path(claim) => {
                    self.claims.remove(&(claim.host.clone(), attempt));
                    touched.hosts.insert(claim.host.clone());
                }
                Event::Default(_) => {
                    self.defaults.remove(&attempt);
                    touched.default = true;
                }
                Event::Report(_) => {}
            }
        }
        for service in &old.contribution.services {
            self.users.remove(&(service.clone(), old.rank.clone()));
        }
        self.notable.remove(&old.rank);
        self.tls -= usize::from(old.has_tls);
    }

    fn add(
        &mut self,
        key: Key,
        ingress: &Ingress,
        selection: Selection,
        mut contribution: Contribution,
        touched: &mut Touched,
    ) {
        let rank = Arc::new(rank(&ingress.metadata));
        for (index, event) in contribution.events.iter().enumerate() {
            let attempt = (rank.clone(), index);
            match event {
                Event::Path(claim) => {
                    self.claims.insert((claim.host.clone(), attempt));
                    touched.hosts.insert(claim.host.clone());
                }
                Event::Default(_) => {
                    self.defaults.insert(attempt);
                    touched.default = true;
                }
                Event::Report(_) => {}
            }
        }
        for service in &contribution.services {
            self.users.insert((service.clone(), rank.clone()));
        }
        let has_tls = ingress
            .spec
            .as_ref()
            .is_some_and(|spec| spec.tls.as_ref().is_some_and(|tls| !tls.is_empty()));
        self.tls += usize::from(has_tls);
        touched.settle.insert(key.clone());
        // Kept until the Ingress changes: the walk's growth room would be a third of it.
        contribution.events.shrink_to_fit();
        contribution.services.shrink_to_fit();
        let events = contribution.events.len();
        self.entries.insert(
            key,
            Box::new(Entry {
                rank,
                shadow: matches!(selection, Selection::Shadow(_)),
                contribution,
                holders: vec![None; events],
                has_tls,
                diagnostics: Vec::new(),
            }),
        );
    }

    /// Settles one host's claims in precedence order: the first claim of a (path, kind) holds it.
    fn settle_host(&mut self, host: &HostMatch, settle: &mut BTreeSet<Key>, backends: &mut BTreeSet<BackendId>) {
        let first = Arc::new(Rank::FIRST);
        let attempts = self
            .claims
            .range((host.clone(), (first, 0))..)
            .take_while(|(claimed, _)| claimed == host)
            .map(|(_, attempt)| attempt);
        let mut slots: BTreeMap<(&str, PathKind), (&Attempt, &ingress::PathClaim)> = BTreeMap::new();
        let mut fates: Vec<(&Attempt, Option<&Attempt>)> = Vec::new();
        for attempt in attempts {
            let Some(Event::Path(claim)) = self
                .entries
                .get(&attempt.0.key)
                .and_then(|entry| entry.contribution.events.get(attempt.1))
            else {
                continue;
            };
            match slots.entry((claim.path.as_str(), claim.kind)) {
                MapEntry::Vacant(slot) => {
                    slot.insert((attempt, claim));
                    fates.push((attempt, None));
                }
                MapEntry::Occupied(held) => fates.push((attempt, Some(held.get().0))),
            }
        }
        let paths: Vec<PathSpec> = slots
            .values()
            .map(|((rank, _), claim)| PathSpec {
                path: claim.path.clone(),
                kind: claim.kind,
                backend: claim.backend.id.clone(),
                source: source(&rank.key),
                ssl_redirect: claim.ssl_redirect,
                options: RouteOptions::default(),
            })
            .collect();
        let winners: Vec<Arc<Resolved>> = slots.values().map(|(_, claim)| claim.backend.clone()).collect();
        let fates: Vec<(Attempt, Option<String>)> = fates
            .into_iter()
            .map(|(attempt, holder)| (attempt.clone(), holder.map(|(rank, _)| source(&rank.key))))
            .collect();
        let spec = (!paths.is_empty()).then(|| {
            Arc::new(VirtualHostSpec {
                host: host.clone(),
                paths,
                exclusive: false,
            })
        });
        let old = match spec {
            Some(spec) => self.hosts.insert(host.clone(), spec),
            None => self.hosts.remove(host),
        };
        for path in old.iter().flat_map(|old| &old.paths) {
            release(&mut self.backends, &path.backend);
            backends.insert(path.backend.clone());
        }
        for backend in winners {
            backends.insert(backend.id.clone());
            hold(&mut self.backends, backend);
        }
        self.set_fates(fates, settle);
    }

    /// Settles the default backend: the first claim holds it.
    fn settle_default(&mut self, settle: &mut BTreeSet<Key>, backends: &mut BTreeSet<BackendId>) {
        let mut winner: Option<(String, Arc<Resolved>)> = None;
        let mut fates = Vec::with_capacity(self.defaults.len());
        for attempt in &self.defaults {
            let Some(Event::Default(backend)) = self
                .entries
                .get(&attempt.0.key)
                .and_then(|entry| entry.contribution.events.get(attempt.1))
            else {
                continue;
            };
            match &winner {
                None => {
                    winner = Some((source(&attempt.0.key), backend.clone()));
                    fates.push((attempt.clone(), None));
                }
                Some((holder, _)) => fates.push((attempt.clone(), Some(holder.clone()))),
            }
        }
        if let Some(old) = self.default_backend.take() {
            release(&mut self.backends, &old.id);
            backends.insert(old.id.clone());
        }
        if let Some((_, backend)) = winner {
            backends.insert(backend.id.clone());
            hold(&mut self.backends, backend.clone());
            self.default_backend = Some(backend);
        }
        self.set_fates(fates, settle);
    }

    fn set_fates(&mut self, fates: Vec<(Attempt, Option<String>)>, settle: &mut BTreeSet<Key>) {
        for ((rank, index), holder) in fates {
            if let Some(entry) = self.entries.get_mut(&rank.key)
                && entry.holders[index] != holder
            {
                entry.holders[index] = holder;
                settle.insert(rank.key.clone());
            }
        }
    }

    /// The result, from what is kept plus the TLS walk.
    fn finish(&mut self, state: &ClusterState, options: &CompileOptions, index: &Index<'_>) -> Compiled {
        let mut certificates = TlsBuilder::new(state, options.now);
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
        let entries = &self.entries;
        let served = self
            .served
            .get_or_insert_with(|| {
                let mut served: Vec<ServedIngress> = entries
                    .iter()
                    .map(|((namespace, name), entry)| ServedIngress {
                        namespace: namespace.clone(),
                        name: name.clone(),
                        shadow: entry.shadow,
                    })
                    .collect();
                served.sort();
                served
            })
            .clone();
        let default_certificate_error = default_certificate_error(&mut certificates, options);
        let table = TableSpec {
            hosts: self.hosts.values().cloned().collect(),
            default_backend: self.default_backend.as_ref().map(|backend| backend.id.clone()),
            backends: self
                .backends
                .iter()
                .map(|(id, (_, backend))| (id.clone(), backend.spec.clone()))
                .collect(),
            tls: certificates.finish(),
            documents: Default::default(),
        };
        Compiled {
            table,
            diagnostics,
            served,
            default_certificate_error,
            shadow: Vec::new(),
        }
    }
}

/// What a compile must settle again.
#[derive(Default)]
struct Touched {
    hosts: BTreeSet<HostMatch>,
    default: bool,
    /// Ingresses whose diagnostics must be settled again.
    settle: BTreeSet<Key>,
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
        .and_then(|spec| spec.default_backend.as_ref())
        .into_iter()
        .chain(paths.map(|path| &path.backend));
    // A backend without a Service name resolves nothing (as in the walk).
    backends
        .filter_map(|backend| backend.service.as_ref())
        .filter(|service| !service.name.is_empty())
        .map(move |service| (namespace, service.name.as_str()))
}

fn rank(meta: &ObjectMeta) -> Rank {
    Rank {
        missing: meta.creation_timestamp.is_none(),
        created: meta.creation_timestamp.clone(),
        key: key_of(meta),
    }
}

fn key_of(meta: &ObjectMeta) -> Key {
    let (namespace, name) = namespace_name(meta);
    (namespace.to_string(), name.to_string())
}

fn source((namespace, name): &Key) -> String {
    format!("{namespace}/{name}")
}

fn service_of(slice: &crate::objects::EndpointSlice) -> Option<Key> {
    let service = slice.service_name.as_deref()?;
    let (namespace, _) = namespace_name(&slice.metadata);
    Some((namespace.to_string(), service.to_string()))
}

fn hold(backends: &mut BTreeMap<BackendId, (usize, Arc<Resolved>)>, backend: Arc<Resolved>) {
    match backends.get_mut(&backend.id) {
        // The newest resolution: a Service change redoes every Ingress naming it.
        Some((count, held)) => {
            *count += 1;
            *held = backend;
        }
        None => _ = backends.insert(backend.id.clone(), (1, backend)),
    }
}

fn release(backends: &mut BTreeMap<BackendId, (usize, Arc<Resolved>)>, id: &BackendId) {
    if let Some((count, _)) = backends.get_mut(id) {
        *count -= 1;
        if *count == 0 {
            backends.remove(id);
        }
    }
}

/// Replaces `seen` with `now`'s objects, adding the keys of objects that are new, replaced or
/// gone to `changed`; true when none was.
fn diff<K: Metadata<Ty = ObjectMeta>>(seen: &mut Vec<Arc<K>>, now: &[Arc<K>], changed: &mut BTreeSet<Key>) -> bool {
    let before = changed.len();
    // A store lists its objects in the same order while none comes or goes: compare in place.
    if seen.len() == now.len() {
        for (old, new) in seen.iter().zip(now) {
            if !Arc::ptr_eq(old, new) {
                changed.insert(key_of(old.metadata()));
                changed.insert(key_of(new.metadata()));
            }
        }
    } else {
        let mut old: HashMap<*const K, &Arc<K>> = seen.iter().map(|object| (Arc::as_ptr(object), object)).collect();
        for object in now {
            if old.remove(&Arc::as_ptr(object)).is_none() {
                changed.insert(key_of(object.metadata()));
            }
        }
        for gone in old.values() {
            changed.insert(key_of(gone.metadata()));
        }
    }
    seen.clear();
    seen.extend(now.iter().cloned());
    changed.len() == before
}

#[cfg(test)]
impl Incremental {
    /// The backend of `key`'s first claim, to tell a kept contribution from a redone one.
    pub(super) fn first_backend(&self, key: &Key) -> Option<*const Resolved> {
        let entry = self.entries.get(key)?;
        entry.contribution.events.iter().find_map(|event| match event {
            Event::Path(claim) => Some(Arc::as_ptr(&claim.backend)),
            Event::Default(backend) => Some(Arc::as_ptr(backend)),
            Event::Report(_) => None,
        })
    }
}
