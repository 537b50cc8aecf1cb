//! What a replica knows about a Lease someone else holds: the record it last read and since when,
//! on its own monotonic clock. Expiry is judged from that alone, never from the `renewTime` the
//! holder wrote, which comes from another machine's wall clock.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use tokio::time::Instant;

/// The parts of a Lease whose change proves its holder is alive. Any write changes the
/// resourceVersion, so a holder that renews always changes the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Empty when released or never held.
    pub holder: String,
    /// As written, for comparison only.
    pub renew_time: Option<String>,
    pub resource_version: Option<String>,
    /// How long the holder claims the Lease without renewing. At least 1 s.
    pub lease_duration: Duration,
}

/// A record and when it was first read in this form.
#[derive(Clone, Debug)]
pub struct Observation {
    pub record: Record,
    pub since: Instant,
}

// === impl Record ===

impl Record {
    /// The record of `lease`; a Lease without `leaseDurationSeconds` counts as `default_duration`.
    pub fn of(lease: &Lease, default_duration: Duration) -> Record {
        let spec = lease.spec.clone().unwrap_or_default();
        let lease_duration = spec
            .lease_duration_seconds
            .and_then(|seconds| u64::try_from(seconds).ok())
            .map_or(default_duration, Duration::from_secs)
            .max(Duration::from_secs(1));
        Record {
            holder: spec.holder_identity.unwrap_or_default(),
            renew_time: spec.renew_time.map(|time| time.0.to_string()),
            resource_version: lease.metadata.resource_version.clone(),
            lease_duration,
        }
    }
}

// === impl Observation ===

impl Observation {
    pub fn new(record: Record, now: Instant) -> Self {
        Observation { record, since: now }
    }

    /// Notes the record read at `now`: a different one restarts the count.
    pub fn update(&mut self, record: Record, now: Instant) {
        if self.record != record {
            *self = Observation::new(record, now);
        }
    }

    /// Whether another replica may take the Lease at `now`: nobody holds it (it was released),
    /// or the record has stayed the same for the whole lease duration since we first read it. The
    /// holder's round that wrote it started before our read, and a holder stops leading a renew
    /// deadline (shorter than the lease duration) after that start unless it renews again.
    pub fn expired(&self, now: Instant) -> bool {
        self.record.holder.is_empty() || now.saturating_duration_since(self.since) >= self.record.lease_duration
    }
}
