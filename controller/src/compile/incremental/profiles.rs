//! The profiles that compile their own Ingresses (qcloud, nginx) in the incremental compile:
//! their Ingresses kept by host, compiled again one host group at a time.
//!
//! ```text
//! changed Ingresses, users of changed Services, hosts whose standard claims changed, groups
//!   that asked about certificates ─closure over shared hosts─▶ Ingresses to redo
//! each host group (Ingresses linked by a host they name) ─Shadowed::compile into a table
//!   seeded with the standard claims on its hosts─▶ its hosts, verdicts and diagnostics, kept
//! ```
//! A profile's answer for a host depends on the Ingresses naming that host (a qcloud host two
//! load balancers claim, an nginx host with a regex path, the hosts of a certificate) and on
//! the standard claims on it, which go first; never on another host. So a group of Ingresses
//! linked by the hosts they name compiles alone to what the full compile gives for its hosts.
//! A group that asked about certificates is compiled again at every compile, as the standard
//! TLS walk is done whole: Secrets and the clock are not tracked.

use std::{
    collections::{BTreeMap, BTreeSet},
    iter::once,
    sync::Arc,
};

use crate::objects::Ingress;
use shunt_proxy::publish::SpecChanges;
use shunt_spec::{BackendId, BackendSpec, Document, VirtualHostSpec};

use super::{
    Index, Key, Rank, backend_services,
    hosts::{ByHost, HostSpecs},
    settle::{Held, HeldBackends, hold, release},
};
use crate::{
    compile::{
        CompileOptions, Diagnostic, Profile, TlsBuilder, backend::Backends, class::Classes, table::TableBuilder,
    },
    shadow::{HostVerdict, IngressVerdict, ProfileConfig, Verdicts},
};

use host_keys::{host_key, ingress_host_keys, match_key};

/// What the incremental compile keeps of the Ingresses a profile compiles itself.
#[derive(Default)]
pub(super) struct Profiles {
    members: BTreeMap<SharedKey, Member>,
    /// (host key, Ingress) for each host key a member names.
    by_host: BTreeSet<(Arc<str>, SharedKey)>,
    /// What the last compile of each host key's group gave, by the key its members name.
    outputs: BTreeMap<Arc<str>, Output>,
    /// The table's hosts on a key some member names: the standard claims on them and the
    /// profiles' claims after them. They replace the standard layer's hosts of the same name.
    hosts: HostSpecs,
    /// Backends those hosts name, with how many paths name each: the group's resolutions, shared.
    backends: HeldBackends,
    /// Members of groups that asked about certificates: compiled again each time.
    asking: BTreeSet<Key>,
    /// What the profiles were last compiled with; a change compiles every member again.
    config: Option<ProfileConfig>,
    /// The verdicts sorted by host, and the `/shadow` document; `None` after a verdict changed.
    shadow: Option<Shadow>,
    /// Each list of classes a verdict has named, held once for every verdict naming it. Bounded:
    /// the lists are sets of the classes shunt shadows or compiles with a profile.
    class_lists: BTreeSet<Arc<[String]>>,
}

/// The verdicts sorted by host, the Ingress verdicts sorted by Ingress, and the `/shadow`
/// document's text.
pub(super) type Shadow = (Arc<[Arc<HostVerdict>]>, Arc<[IngressVerdict]>, Option<Document>);

/// An Ingress's or a Service's key, one allocation shared by every set that names it: at
/// 10,000 members the sets' B-tree nodes hold pointers, not three copies of each name.
type SharedKey = Arc<Key>;

/// One Ingress a profile compiles.
struct Member {
    shadow: bool,
    /// The host keys it names ([`host_key`]).
    keys: Box<[Arc<str>]>,
    services: Box<[Key]>,
    /// What it was reported for; most members have nothing.
    reported: Option<Box<Reported>>,
}

#[derive(Default)]
struct Reported {
    /// In the order its profile found them.
    diagnostics: Vec<Diagnostic>,
    /// Its verdict as a catch-all or a skipped Ingress, if it is one.
    ingresses: Vec<IngressVerdict>,
}

impl Member {
    fn diagnostics(&self) -> &[Diagnostic] {
        self.reported.as_ref().map_or(&[], |reported| &reported.diagnostics)
    }

    fn ingresses(&self) -> &[IngressVerdict] {
        self.reported.as_ref().map_or(&[], |reported| &reported.ingresses)
    }

    fn reported(&mut self) -> &mut Reported {
        self.reported.get_or_insert_default()
    }
}

/// A host key's part of its group's result, kept until the group compiles again: boxed
/// slices, as most keys hold one host.
#[derive(Default)]
struct Output {
    /// The same specs [`Profiles::hosts`] holds: a pointer each, not a copy of the name.
    hosts: Box<[Arc<VirtualHostSpec>]>,
    /// Shared with the sorted list the compile hands out ([`Profiles::shadow`]): one copy.
    verdicts: Box<[Arc<HostVerdict>]>,
}

/// What compiling groups needs besides the kept state.
pub(super) struct GroupInputs<'s, 'c> {
    pub index: &'c Index<'s>,
    pub classes: &'c Classes<'s>,
    pub backends: Option<Backends<'s>>,
    pub certificates: &'c mut TlsBuilder<'s>,
    pub options: &'c CompileOptions,
    pub config: &'c ProfileConfig,
}

/// One Ingress of a group about to be compiled.
struct Selected<'s> {
    rank: Rank,
    ingress: &'s Ingress,
    profile: Profile,
}

// === impl Profiles ===

impl Profiles {
    pub(super) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// `key` as the members that name it hold it (one allocation for every set that keeps it),
    /// or a new one if none does.
    fn shared_key(&self, key: &str) -> Arc<str> {
        let from = (Arc::from(key), no_key());
        match self.by_host.range(&from..).next() {
            Some((named, _)) if **named == *key => named.clone(),
            _ => from.0,
        }
    }

    fn members_on<'a>(&'a self, host: &'a str) -> impl Iterator<Item = &'a Key> + 'a {
        let from = (Arc::from(host), no_key());
        self.by_host
            .range(from..)
            .take_while(move |(named, _)| &**named == host)
            .map(|(_, key)| &**key)
    }

    /// The members naming one of `services`: a scan of the members, as an edit changes a
    /// Service or two and an index would keep an entry per member.
    fn users_of_any<'a>(&'a self, services: &'a BTreeSet<Key>) -> impl Iterator<Item = &'a Key> + 'a {
        (self.members.iter())
            .filter(|(_, member)| member.services.iter().any(|service| services.contains(service)))
            .map(|(key, _)| &**key)
    }

    /// The Services the members among `keys` named at their last compile.
    pub(super) fn services_of<'a>(&'a self, keys: &'a BTreeSet<Key>) -> impl Iterator<Item = &'a Key> + 'a {
        keys.iter()
            .filter_map(|key| self.members.get(key))
            .flat_map(|member| member.services.iter())
    }

    /// Whether the last compile's configuration differs from `config`.
    pub(super) fn config_changed(&self, config: &ProfileConfig) -> bool {
        !self.members.is_empty() && self.config.as_ref() != Some(config)
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &Key> {
        self.members.keys().map(|key| &**key)
    }

    /// Each member as `Compiled::served` lists it.
    pub(super) fn served(&self) -> impl Iterator<Item = (&Key, bool)> {
        self.members.iter().map(|(key, member)| (&**key, member.shadow))
    }

    /// The members' diagnostics, by Ingress (namespace, name), as the full compile orders them.
    pub(super) fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.members.values().flat_map(Member::diagnostics)
    }

    /// The table's hosts with the standard layer's `standard` ones: a host the profiles' groups
    /// compiled replaces the standard one of the same name. Sorted by host.
    pub(super) fn merge_hosts(&self, standard: &HostSpecs) -> Vec<Arc<VirtualHostSpec>> {
        if self.hosts.is_empty() {
            return standard.iter().map(|ByHost(spec)| spec.clone()).collect();
        }
        let mut hosts = Vec::with_capacity(standard.len() + self.hosts.len());
        let mut ours = self.hosts.iter().peekable();
        for ByHost(spec) in standard {
            while let Some(next) = ours.peek()
                && next.0.host < spec.host
            {
                hosts.extend(ours.next().map(|ByHost(spec)| spec.clone()));
            }
            if ours.peek().is_some_and(|next| next.0.host == spec.host) {
                hosts.extend(ours.next().map(|ByHost(spec)| spec.clone()));
            } else {
                hosts.push(spec.clone());
            }
        }
        hosts.extend(ours.map(|ByHost(spec)| spec.clone()));
        hosts
    }

    /// The backends the profiles' hosts name.
    pub(super) fn backends(&self) -> impl Iterator<Item = (&BackendId, &BackendSpec)> {
        self.backends
            .keys()
            .map(|Held(resolved)| (&resolved.id, &resolved.spec))
    }

    /// The verdicts sorted by host, and the `/shadow` document for them.
    pub(super) fn shadow(&mut self, options: &CompileOptions) -> Shadow {
        let (outputs, members) = (&self.outputs, &self.members);
        let shadow = self.shadow.get_or_insert_with(|| {
            let mut verdicts: Vec<Arc<HostVerdict>> = outputs
                .values()
                .flat_map(|output| output.verdicts.iter().cloned())
                .collect();
            // Stable: one host's verdicts keep their profiles' order (qcloud, then nginx).
            verdicts.sort_by(|a, b| a.host.cmp(&b.host));
            // Members are keyed by (namespace, name): already in the Ingress order.
            let ingresses: Vec<IngressVerdict> = members
                .values()
                .flat_map(|member| member.ingresses().iter().cloned())
                .collect();
            let (verdicts, ingresses): (Arc<[_]>, Arc<[_]>) = (verdicts.into(), ingresses.into());
            let report = crate::shadow::report(options, verdicts.clone(), ingresses.clone());
            (verdicts, ingresses, report)
        });
        shadow.clone()
    }

    /// The kept list equal to `classes`.
    fn shared_classes(&mut self, classes: &Arc<[String]>) -> Arc<[String]> {
        if let Some(kept) = self.class_lists.get(classes) {
            return kept.clone();
        }
        self.class_lists.insert(classes.clone());
        classes.clone()
    }

    /// Takes out what the last compile of `key`'s group gave for it; returns its verdicts.
    fn forget_output(&mut self, key: &str, spec_changes: &mut SpecChanges) -> Vec<Arc<HostVerdict>> {
        let Some(output) = self.outputs.remove(key) else {
            return Vec::new();
        };
        for given in output.hosts {
            let Some(ByHost(spec)) = self.hosts.take(&given.host) else {
                continue;
            };
            for id in spec.paths.iter().flat_map(|path| {
                once(&path.backend)
                    .chain(path.canary_backend())
                    .chain(path.error_backend())
            }) {
                release(&mut self.backends, id);
                spec_changes.backends.insert(id.clone());
            }
            spec_changes.hosts.insert(spec.host.clone());
        }
        output.verdicts.into_vec()
    }

    fn forget_member(&mut self, key: &Key, old_keys: &mut BTreeSet<String>) {
        let Some((key, member)) = self.members.remove_entry(key) else {
            return;
        };
        for host in member.keys {
            old_keys.insert(host.to_string());
            self.by_host.remove(&(host, key.clone()));
        }
        self.asking.remove(&*key);
    }

    /// `error_backend`: a Service every member's answers may come from (the nginx profile's
    /// `--nginx-default-backend`), compiled again when it changes.
    fn add_member(&mut self, key: Key, ingress: &Ingress, shadow: bool, error_backend: Option<&Key>) {
        let key = Arc::new(key);
        let keys: Box<[Arc<str>]> = ingress_host_keys(ingress).into_iter().map(Arc::from).collect();
        let mut services: BTreeSet<Key> = backend_services(ingress)
            .map(|(namespace, name)| (namespace.to_string(), name.to_string()))
            .collect();
        services.extend(error_backend.cloned());
        let services: Box<[Key]> = services.into_iter().collect();
        for host in &keys {
            self.by_host.insert((host.clone(), key.clone()));
        }
        let member = Member {
            shadow,
            keys,
            services,
            reported: None,
        };
        self.members.insert(key, member);
    }

    /// Keeps a group's table, verdicts and diagnostics under the host keys they belong to.
    fn keep(
        &mut self,
        table: TableBuilder,
        verdicts: Verdicts,
        diagnostics: Vec<Diagnostic>,
        spec_changes: &mut SpecChanges,
    ) {
        let Verdicts {
            hosts: verdicts,
            ingresses,
        } = verdicts;
        let table = table.finish_hosts();
        // By host key: the hosts and verdicts the group gave.
        type Given = (Vec<Arc<VirtualHostSpec>>, Vec<Arc<HostVerdict>>);
        let mut kept: BTreeMap<String, Given> = BTreeMap::new();
        for spec in table.hosts {
            // A canary's and an error backend are held like the route's own.
            for id in spec.paths.iter().flat_map(|path| {
                once(&path.backend)
                    .chain(path.canary_backend())
                    .chain(path.error_backend())
            }) {
                if let Some(backend) = table.backends.get(id) {
                    hold(&mut self.backends, backend.clone());
                }
                spec_changes.backends.insert(id.clone());
            }
            spec_changes.hosts.insert(spec.host.clone());
            kept.entry(match_key(&spec.host)).or_default().0.push(spec.clone());
            self.hosts.replace(ByHost(spec));
        }
        for mut verdict in verdicts {
            verdict.classes = self.shared_classes(&verdict.classes);
            kept.entry(host_key(&verdict.host))
                .or_default()
                .1
                .push(Arc::new(verdict));
        }
        for (key, (hosts, verdicts)) in kept {
            let key = self.shared_key(&key);
            let held = self.outputs.entry(key).or_default();
            held.hosts = [std::mem::take(&mut held.hosts).into_vec(), hosts].concat().into();
            held.verdicts = [std::mem::take(&mut held.verdicts).into_vec(), verdicts]
                .concat()
                .into();
        }
        for diagnostic in diagnostics {
            let key = (diagnostic.namespace.clone(), diagnostic.name.clone());
            if let Some(member) = self.members.get_mut(&key) {
                member.reported().diagnostics.push(diagnostic);
            }
        }
        for entry in ingresses {
            let (namespace, name) = entry.ingress.split_once('/').unwrap_or_default();
            if let Some(member) = self.members.get_mut(&(namespace.to_string(), name.to_string())) {
                member.reported().ingresses.push(entry);
            }
        }
    }
}

/// The least key: where a range over one name's entries starts.
fn no_key() -> SharedKey {
    Arc::new((String::new(), String::new()))
}

mod groups;
mod host_keys;
