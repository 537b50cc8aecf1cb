//! Which profile Ingresses to compile again, and compiling them one host group at a time.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use shunt_proxy::publish::SpecChanges;
use shunt_spec::HostMatch;

use super::{
    GroupInputs, Member, Profiles, Selected,
    host_keys::{ingress_host_keys, key_matches, match_key},
};
use crate::{
    compile::{
        Profile, Sink,
        incremental::{Incremental, Key, Rank, key_of, source},
        ingress::Event,
        namespace_name,
        table::TableBuilder,
    },
    objects::Ingress,
    shadow::{HostVerdict, IngressVerdict, Shadowed},
};

impl Incremental {
    /// The Ingresses whose profile compile must run again: the `changed` ones, the members
    /// naming a changed Service, the members of groups that ask about certificates, and every
    /// member sharing a host with one of them or with a claim of the `standard` Ingresses being
    /// redone. `now` gives a changed Ingress as it is now.
    pub(in crate::compile::incremental) fn profile_redo<'i>(
        &self,
        changed: &BTreeSet<Key>,
        standard: &BTreeSet<Key>,
        services: &BTreeSet<Key>,
        now: impl Fn(&Key) -> Option<&'i Ingress>,
    ) -> BTreeSet<Key> {
        let profiles = &self.profiles;
        // No member, no host group: only a changed Ingress can become one.
        if profiles.members.is_empty() {
            return changed.clone();
        }
        let mut hosts: Vec<String> = Vec::new();
        for key in standard.iter().chain(changed) {
            let events = self.entries.get(key).map(|entry| &entry.events);
            hosts.extend(events.into_iter().flatten().filter_map(|event| match event {
                Event::Path(claim) => Some(match_key(&claim.host)),
                _ => None,
            }));
        }
        let mut ingresses: Vec<Key> = changed.iter().cloned().collect();
        if !services.is_empty() {
            ingresses.extend(profiles.users_of_any(services).cloned());
        }
        ingresses.extend(profiles.asking.iter().cloned());
        let mut redo = BTreeSet::new();
        let mut seen_hosts = BTreeSet::new();
        loop {
            if let Some(key) = ingresses.pop() {
                if redo.contains(&key) {
                    continue;
                }
                if let Some(member) = profiles.members.get(&key) {
                    hosts.extend(member.keys.iter().map(|host| host.to_string()));
                }
                if changed.contains(&key)
                    && let Some(ingress) = now(&key)
                {
                    hosts.extend(ingress_host_keys(ingress));
                }
                redo.insert(key);
            } else if let Some(host) = hosts.pop() {
                if seen_hosts.contains(&host) {
                    continue;
                }
                ingresses.extend(profiles.members_on(&host).filter(|key| !redo.contains(*key)).cloned());
                seen_hosts.insert(host);
            } else {
                return redo;
            }
        }
    }

    /// Compiles again the profile Ingresses among `redo` (a set closed over shared hosts, see
    /// [`Incremental::profile_redo`]), group by group, after the standard layer has settled.
    pub(in crate::compile::incremental) fn compile_profiles(
        &mut self,
        redo: &BTreeSet<Key>,
        mut inputs: GroupInputs<'_, '_>,
        spec_changes: &mut SpecChanges,
    ) {
        if self.profiles.config.as_ref() != Some(inputs.config) {
            self.profiles.config = Some(inputs.config.clone());
        }
        let mut keys = BTreeSet::new();
        let mut members_before: Vec<(Key, bool)> = Vec::new();
        let mut ingresses_before: Vec<IngressVerdict> = Vec::new();
        for key in redo {
            if let Some(member) = self.profiles.members.get(key) {
                members_before.push((key.clone(), member.shadow));
                ingresses_before.extend(member.ingresses().iter().cloned());
            }
            self.profiles.forget_member(key, &mut keys);
        }
        let mut selected = Vec::new();
        for key in redo {
            let Some(&ingress) = inputs.index.get(&(key.0.as_str(), key.1.as_str())) else {
                continue;
            };
            let Some(selection) = inputs.classes.select(ingress) else {
                continue;
            };
            let Some(profile) = selection.own_profile() else {
                continue;
            };
            let shadow = matches!(selection, crate::compile::class::Selection::Shadow(_));
            let error_backend = (profile == Profile::Nginx)
                .then_some(inputs.options.shadow.nginx_default_backend.as_ref())
                .flatten();
            self.profiles.add_member(key.clone(), ingress, shadow, error_backend);
            keys.extend(self.profiles.members[key].keys.iter().map(|host| host.to_string()));
            selected.push(Selected {
                rank: Rank::new(&ingress.metadata),
                ingress,
                profile,
            });
        }
        // `served` lists the members and their shadow flags: sorted again only when they change.
        let members_after = redo
            .iter()
            .filter_map(|key| Some((key, self.profiles.members.get(key)?.shadow)));
        if !members_after.eq(members_before.iter().map(|(key, shadow)| (key, *shadow))) {
            self.served = None;
        }
        let before: Vec<Vec<Arc<HostVerdict>>> = (keys.iter())
            .map(|key| self.profiles.forget_output(key, spec_changes))
            .collect();
        for group in groups(&self.profiles, selected) {
            self.compile_group(group, &mut inputs, spec_changes);
        }
        // An endpoint edit compiles a group again to the same verdicts: the report stands.
        let outputs = &self.profiles.outputs;
        let after = keys
            .iter()
            .map(|key| outputs.get(key.as_str()).map_or(&[][..], |output| &*output.verdicts));
        let members = &self.profiles.members;
        let ingresses_after = redo
            .iter()
            .filter_map(|key| members.get(key))
            .flat_map(Member::ingresses);
        if !after.eq(before.iter().map(Vec::as_slice)) || !ingresses_after.eq(ingresses_before.iter()) {
            self.profiles.shadow = None;
        }
    }

    /// Compiles one host group, its Ingresses in precedence order, into a table holding the
    /// standard claims on its hosts first, as the full compile's table does.
    fn compile_group(
        &mut self,
        mut group: Vec<Selected<'_>>,
        inputs: &mut GroupInputs<'_, '_>,
        spec_changes: &mut SpecChanges,
    ) {
        group.sort_by(|a, b| a.rank.cmp(&b.rank));
        let mut host_keys = BTreeSet::new();
        let mut shadowed = Shadowed::default();
        for selected in &group {
            host_keys.extend(ingress_host_keys(selected.ingress));
            shadowed.take(selected.ingress, selected.profile);
        }
        let mut table = TableBuilder::default();
        for host in host_keys.iter().flat_map(|key| key_matches(key)) {
            self.claim_standard(&host, &mut table);
        }
        let mut sink = Sink {
            backends: inputs.backends.take().expect("backends are put back after each group"),
            table,
            diagnostics: Vec::new(),
        };
        let asked = inputs.certificates.asked();
        let verdicts = shadowed.compile(&mut sink, inputs.certificates, &inputs.options.shadow, inputs.config);
        let Sink {
            backends,
            table,
            diagnostics,
        } = sink;
        inputs.backends = Some(backends);
        if inputs.certificates.asked() != asked {
            self.profiles
                .asking
                .extend(group.iter().map(|selected| key_of(&selected.ingress.metadata)));
        }
        self.profiles.keep(table, verdicts, diagnostics, spec_changes);
    }

    /// Feeds the standard layer's claims on `host` into `table`, in precedence order.
    fn claim_standard(&self, host: &HostMatch, table: &mut TableBuilder) {
        let attempts = self
            .claims
            .range((host.clone(), (Arc::new(Rank::FIRST), 0))..)
            .take_while(|(claimed, _)| claimed == host);
        for (_, attempt) in attempts {
            if let Some(Event::Path(claim)) = self.event(attempt) {
                // Settled already: the standard layer knows who won.
                let _ = table.claim(claim, &source(&attempt.0.key));
            }
        }
    }
}

/// `selected` split into groups linked by a host key they share.
fn groups<'s>(profiles: &Profiles, selected: Vec<Selected<'s>>) -> Vec<Vec<Selected<'s>>> {
    let mut parent: Vec<usize> = (0..selected.len()).collect();
    fn root(parent: &mut [usize], mut at: usize) -> usize {
        while parent[at] != at {
            parent[at] = parent[parent[at]];
            at = parent[at];
        }
        at
    }
    let mut first_on: BTreeMap<&str, usize> = BTreeMap::new();
    for (at, one) in selected.iter().enumerate() {
        let (namespace, name) = namespace_name(&one.ingress.metadata);
        let keys = profiles
            .members
            .get(&(namespace.to_string(), name.to_string()))
            .map(|member| &member.keys[..])
            .unwrap_or_default();
        for host in keys {
            let other = *first_on.entry(host).or_insert(at);
            let (a, b) = (root(&mut parent, at), root(&mut parent, other));
            parent[a] = b;
        }
    }
    let mut by_root: BTreeMap<usize, Vec<Selected<'s>>> = BTreeMap::new();
    for (at, one) in selected.into_iter().enumerate() {
        by_root.entry(root(&mut parent, at)).or_default().push(one);
    }
    by_root.into_values().collect()
}
