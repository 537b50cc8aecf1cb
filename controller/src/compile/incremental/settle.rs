//! Settles what an incremental compile touched: each touched host from all its kept claims, by
//! the full compile's rule ([`HostSlots`]), the default backend, then the diagnostics of the
//! Ingresses whose claims won or lost differently.

use std::{
    borrow::Borrow,
    cmp::Ordering,
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use shunt_proxy::publish::SpecChanges;
use shunt_spec::{BackendId, HostMatch};

use super::{Attempt, Incremental, Key, Rank, hosts::ByHost, source};
use crate::compile::{
    backend::Resolved,
    claims::{HostSlots, PathClaim},
    ingress::{self, Event},
};

/// What a compile must settle again.
#[derive(Default)]
pub(super) struct Touched {
    pub hosts: BTreeSet<HostMatch>,
    pub default: bool,
    /// Ingresses whose diagnostics must be settled again.
    pub settle: BTreeSet<Key>,
}

/// Per claim: the Ingress holding the slot it claimed (`namespace/name`), `None` when it won.
type Fates = Vec<(Attempt, Option<String>)>;

// === impl Incremental ===

impl Incremental {
    /// Settles everything `touched` names; returns the hosts and backends that changed.
    pub(super) fn settle(&mut self, mut touched: Touched) -> SpecChanges {
        let mut spec_changes = SpecChanges::default();
        for host in &touched.hosts {
            self.settle_host(host, &mut touched.settle, &mut spec_changes.backends);
        }
        if touched.default {
            self.settle_default(&mut touched.settle, &mut spec_changes.backends);
        }
        for key in &touched.settle {
            self.settle_diagnostics(key);
        }
        spec_changes.hosts = touched.hosts;
        spec_changes
    }

    /// Settles one host's claims in precedence order: the first claim of a slot holds it.
    fn settle_host(&mut self, host: &HostMatch, settle: &mut BTreeSet<Key>, backends: &mut BTreeSet<BackendId>) {
        let mut slots: HostSlots<&str, (&Attempt, &PathClaim)> = HostSlots::default();
        let mut fates: Fates = Vec::new();
        let attempts = self
            .claims
            .range((host.clone(), (Arc::new(Rank::FIRST), 0))..)
            .take_while(|(claimed, _)| claimed == host);
        for (_, attempt) in attempts {
            let Some(Event::Path(claim)) = self.event(attempt) else {
                continue;
            };
            let holder = slots.claim(
                (&claim.path, || claim.path.as_str()),
                (claim.kind, claim.route.listeners()),
                (attempt, claim),
                |&((rank, _), _)| source(&rank.key),
            );
            fates.push((attempt.clone(), holder.err()));
        }
        let mut winners: Vec<Arc<Resolved>> = Vec::new();
        let spec = slots.into_spec(host.clone(), false, |path, kind, ((rank, _), claim)| {
            winners.extend(claim.backend.clone());
            claim
                .route
                .spec(path, kind, claim.backend.as_deref(), source(&rank.key))
        });
        let old = match spec {
            Some(spec) => self.hosts.replace(ByHost(Arc::new(spec))),
            None => self.hosts.take(host),
        };
        for path in old.iter().flat_map(|old| &old.0.paths) {
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
        let mut fates: Fates = Vec::with_capacity(self.defaults.len());
        for attempt in &self.defaults {
            let Some(Event::Default(backend)) = self.event(attempt) else {
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

    /// The kept event an attempt names.
    pub(super) fn event(&self, (rank, index): &Attempt) -> Option<&Event> {
        self.entries.get(&rank.key)?.events.get(*index)
    }

    /// Records who holds each claim's slot; an Ingress whose claims fare differently is settled again.
    fn set_fates(&mut self, fates: Fates, settle: &mut BTreeSet<Key>) {
        for ((rank, index), holder) in fates {
            if let Some(entry) = self.entries.get_mut(&rank.key)
                && entry.set_holder(index, holder)
            {
                settle.insert(rank.key.clone());
            }
        }
    }

    /// The diagnostics of `key`'s events, given who holds what it claimed.
    fn settle_diagnostics(&mut self, key: &Key) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        let mut diagnostics = std::mem::take(&mut entry.diagnostics);
        diagnostics.clear();
        ingress::settle(
            (&key.0, &key.1),
            &entry.events,
            |index| entry.holder(index),
            &mut diagnostics,
        );
        entry.diagnostics = diagnostics;
        if entry.has_tls || !entry.diagnostics.is_empty() {
            self.notable.insert(entry.rank.clone());
        } else {
            self.notable.remove(&entry.rank);
        }
    }
}

/// A backend some winning claim holds, ordered and found by its id, which it holds: a map by
/// id would keep a second copy of each.
#[derive(Debug)]
pub(super) struct Held(pub Arc<Resolved>);

/// The held backends, with how many claims hold each.
pub(super) type HeldBackends = BTreeMap<Held, usize>;

pub(super) fn hold(backends: &mut HeldBackends, backend: Arc<Resolved>) {
    // The newest resolution: a Service change redoes every Ingress naming it.
    let count = backends.remove(&backend.id).unwrap_or(0);
    backends.insert(Held(backend), count + 1);
}

pub(super) fn release(backends: &mut HeldBackends, id: &BackendId) {
    if let Some(count) = backends.get_mut(id) {
        *count -= 1;
        if *count == 0 {
            backends.remove(id);
        }
    }
}

// === impl Held ===

impl Borrow<BackendId> for Held {
    fn borrow(&self) -> &BackendId {
        &self.0.id
    }
}

/// Ordered and compared as the id it borrows, as [`Borrow`] requires.
impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.id.cmp(&other.0.id)
    }
}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Held {}
