//! What the endpoint choice records: requests by locality, retries and ejections by backend, and
//! the endpoints out of rotation now.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use super::{BackendLabels, UpstreamStats, register};
use crate::spec::{Locality, RetryReason as Why};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RetryLabels {
    backend: String,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LocalityLabels {
    locality: &'static str,
}

pub(super) struct ChoiceFamilies {
    /// By `Locality::ALL` order: a request touches one counter, no label lookup.
    by_locality: [Counter; 3],
    retries: Family<RetryLabels, Counter>,
    ejections: Family<BackendLabels, Counter>,
    ejected: Gauge,
}

impl ChoiceFamilies {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let localities: Family<LocalityLabels, Counter> = register(
            registry,
            "shunt_upstream_requests_by_locality",
            "Tries sent to endpoints, by where the endpoint is from this proxy (same_node, same_zone, other)",
            Family::default(),
        );
        let by_locality = Locality::ALL.map(|locality| {
            localities.get_or_create_owned(&LocalityLabels {
                locality: locality.as_str(),
            })
        });
        ChoiceFamilies {
            by_locality,
            retries: register(
                registry,
                "shunt_upstream_retries",
                "Tries sent again to another endpoint, by backend and reason",
                Family::default(),
            ),
            ejections: register(
                registry,
                "shunt_upstream_ejections",
                "Endpoints taken out of rotation by passive health (outlier ejection), by backend",
                Family::default(),
            ),
            ejected: register(
                registry,
                "shunt_upstream_ejected_endpoints",
                "Endpoints out of rotation now, all backends",
                Gauge::default(),
            ),
        }
    }

    pub(super) fn retire(&self, labels: &BackendLabels) {
        self.ejections.remove(labels);
        for reason in Why::ALL.map(Why::as_label) {
            self.retries.remove(&RetryLabels {
                backend: labels.backend.clone(),
                reason,
            });
        }
    }
}

// === impl UpstreamStats ===

impl UpstreamStats {
    /// One try went to an endpoint at `locality`.
    pub fn tried(&self, locality: Locality) {
        let index = Locality::ALL.iter().position(|l| *l == locality).unwrap_or(2);
        self.0.families.choice.by_locality[index].inc();
    }

    /// A failed try was sent again, for `reason`.
    pub fn retried(&self, reason: &'static str) {
        let labels = RetryLabels {
            backend: self.0.backend.clone(),
            reason,
        };
        self.0.families.choice.retries.get_or_create(&labels).inc();
    }

    /// An endpoint of this backend was ejected.
    pub fn ejected(&self) {
        let choice = &self.0.families.choice;
        choice.ejections.get_or_create(&self.0.labels()).inc();
        choice.ejected.inc();
    }

    /// An ejected endpoint came back into rotation.
    pub fn returned(&self) {
        self.0.families.choice.ejected.dec();
    }

    /// Retries counted for `reason` so far.
    pub fn retries(&self, reason: &'static str) -> u64 {
        let labels = RetryLabels {
            backend: self.0.backend.clone(),
            reason,
        };
        self.0.families.choice.retries.get(&labels).map_or(0, |c| c.get())
    }

    /// Ejections counted for this backend so far.
    pub fn ejections(&self) -> u64 {
        self.0
            .families
            .choice
            .ejections
            .get(&self.0.labels())
            .map_or(0, |c| c.get())
    }
}
