//! Applies Ingresses to what the incremental compile keeps: each one's old contribution
//! forgotten, its new one walked and its claims recorded, the hosts and default backend they
//! touch noted for settling.

use std::{collections::BTreeSet, sync::Arc};

use crate::objects::Ingress;

use super::{ByKey, Entry, Incremental, Index, Key, Rank, has_tls, settle::Touched};
use crate::compile::{
    backend::Backends,
    class::{Classes, Selection},
    ingress::{self, Contribution, Event},
};

// === impl Incremental ===

impl Incremental {
    /// Walks each Ingress of `redo` again (if it is still selected) in place of its old
    /// contribution.
    pub(super) fn apply(
        &mut self,
        redo: BTreeSet<Key>,
        index: &Index<'_>,
        classes: &Classes<'_>,
        backends: &mut Backends<'_>,
        touched: &mut Touched,
    ) {
        for key in redo {
            let was = self.entries.remove(&key).map(|old| {
                self.forget(&old, touched);
                old.shadow
            });
            // Ingresses a profile compiles itself are kept by the profiles' layer (profiles.rs).
            let selected = index
                .get(&(key.0.as_str(), key.1.as_str()))
                .and_then(|&ingress| Some((ingress, classes.select(ingress)?)))
                .filter(|(_, selection)| selection.own_profile().is_none());
            // `served` lists the entries and their shadow flags: an Ingress edited in place
            // keeps it (rebuilding it sorted 10k names per edit).
            if was != selected.map(|(_, selection)| matches!(selection, Selection::Shadow(_))) {
                self.served = None;
            }
            let Some((ingress, selection)) = selected else {
                continue;
            };
            let contribution = ingress::contribution(ingress, backends);
            self.add(key, ingress, selection, contribution, touched);
        }
    }

    /// Takes `old`'s claims and Service uses out.
    fn forget(&mut self, old: &Entry, touched: &mut Touched) {
        for (index, event) in old.events.iter().enumerate() {
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
        self.notable.remove(&old.rank);
        self.tls -= usize::from(old.has_tls);
    }

    fn add(
        &mut self,
        key: Key,
        ingress: &Ingress,
        selection: Selection,
        contribution: Contribution,
        touched: &mut Touched,
    ) {
        let rank = Arc::new(Rank::new(&ingress.metadata));
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
        let has_tls = has_tls(ingress);
        self.tls += usize::from(has_tls);
        touched.settle.insert(key);
        // Kept until the Ingress changes: boxed, without the walk's growth room (a third of it).
        debug_assert!(
            contribution
                .services
                .iter()
                .all(|(namespace, _)| *namespace == rank.key.0)
        );
        let services = (contribution.services.into_iter())
            .map(|(_, name)| name.into_boxed_str())
            .collect();
        self.entries.insert(
            ByKey(rank.clone()),
            Box::new(Entry {
                rank,
                shadow: matches!(selection, Selection::Shadow(_)),
                events: contribution.events.into_boxed_slice(),
                services,
                holders: Vec::new(),
                has_tls,
                diagnostics: Vec::new(),
            }),
        );
    }
}
