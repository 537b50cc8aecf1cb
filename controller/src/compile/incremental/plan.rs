//! What a compile of some changes does, decided in one place for the compile itself and for
//! the reads of `shunt serve` ([`Incremental::reads`]): everything again, or the Ingresses to
//! redo (the profiles' layer adds its host groups: [`Incremental::profile_redo`]).
//!
//! ```text
//! first compile, unknown changes, classes or options changed, duplicate slices ─▶ Everything
//! otherwise ─▶ Redo { changed Ingresses + users of changed Services and of changed slices' Services }
//! ```

use std::{collections::BTreeSet, sync::Arc};

use super::{Changes, Incremental, Key, key_of, service_of};
use crate::{compile::CompileOptions, objects::EndpointSlice};

pub(super) enum Plan {
    /// Reset, then apply every Ingress.
    Everything,
    /// Apply again the Ingresses that changed and those naming a Service whose object or
    /// slices changed.
    Redo {
        ingresses: BTreeSet<Key>,
        /// The Services whose object or slices changed.
        services: BTreeSet<Key>,
        /// Each changed slice present now, with the Service (in its namespace) it is labelled with.
        labelled: Vec<(Key, String)>,
    },
}

/// `options` as the incremental compile keeps them: without `now`, which changes every compile
/// and reaches only the TLS walk (done whole each time).
pub(super) fn kept(options: &CompileOptions) -> CompileOptions {
    CompileOptions {
        now: None,
        ..options.clone()
    }
}

// === impl Incremental ===

impl Incremental {
    /// The plan for `changes`, given the changed slices as they are now among `slices`.
    pub(super) fn plan(&self, options: &CompileOptions, changes: &Changes, slices: &[Arc<EndpointSlice>]) -> Plan {
        if changes.everything
            || changes.ingress_classes
            || self.duplicate_slices
            || self.options.as_ref() != Some(&kept(options))
        {
            return Plan::Everything;
        }
        let labelled = labelled(changes, slices);
        // The changed Services, and those the changed slices were and are labelled with.
        let mut services = changes.services.clone();
        for key in &changes.endpoint_slices {
            if let Some(service) = self.slice_services.get(key) {
                services.insert((key.0.clone(), service.to_string()));
            }
        }
        services.extend(
            labelled
                .iter()
                .map(|((namespace, _), service)| (namespace.clone(), service.clone())),
        );
        let mut ingresses = changes.ingresses.clone();
        if !services.is_empty() {
            ingresses.extend(self.users_of(&services).into_iter().cloned());
        }
        Plan::Redo {
            ingresses,
            services,
            labelled,
        }
    }

    /// Keeps the Service each changed slice is labelled with now.
    pub(super) fn track_slices(&mut self, changes: &Changes, labelled: Vec<(Key, String)>) {
        let mut named = BTreeSet::new();
        for (key, _) in &labelled {
            // Both Services are redone now; the map can keep only one for later.
            self.duplicate_slices |= !named.insert(key);
        }
        self.slice_services.update(&changes.endpoint_slices, &labelled);
    }
}

/// The changed slices among `slices` that name a Service.
fn labelled(changes: &Changes, slices: &[Arc<EndpointSlice>]) -> Vec<(Key, String)> {
    // Each slice's key is made to look it up: not when no slice changed.
    if changes.endpoint_slices.is_empty() {
        return Vec::new();
    }
    slices
        .iter()
        .filter_map(|slice| {
            let key = key_of(&slice.metadata);
            if !changes.endpoint_slices.contains(&key) {
                return None;
            }
            Some((key, service_of(slice)?.1))
        })
        .collect()
}
