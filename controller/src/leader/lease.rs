//! One election round against the API: read the Lease, then create it, renew it (ours), take it
//! (released, or unchanged for its duration) or leave it; and the release on shutdown. Writes
//! carry the resourceVersion read, so of two replicas racing for one Lease exactly one wins (the
//! other gets 409).

use std::time::Duration;

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::{SignedDuration, Timestamp},
};
use kube::{Api, Client, api::PostParams};
use tokio::time::Instant;

use super::record::{Observation, Record};

/// The wall clock for the times written into the Lease (`acquireTime`, `renewTime`), which people
/// and other tools read. Never used to judge expiry. Tests shift it to play replicas whose clocks
/// disagree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WallClock {
    pub offset: SignedDuration,
}

/// What a round decided.
#[derive(Debug)]
pub enum LeaseDecision {
    /// We hold the Lease, as written by this round (its resourceVersion is the one to release).
    Leading(Box<Lease>),
    /// Someone else holds it, or won the race for it.
    Following,
}

pub struct LeaseApi {
    api: Api<Lease>,
    name: String,
    identity: String,
    lease_duration: Duration,
    clock: WallClock,
}

// === impl WallClock ===

impl WallClock {
    pub fn now(&self) -> Timestamp {
        let now = Timestamp::now();
        now.checked_add(self.offset).unwrap_or(now)
    }
}

// === impl LeaseApi ===

impl LeaseApi {
    pub fn new(client: Client, namespace: &str, name: &str, identity: &str, lease_duration: Duration) -> Self {
        LeaseApi {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            identity: identity.to_string(),
            lease_duration,
            clock: WallClock::default(),
        }
    }

    pub fn with_clock(mut self, clock: WallClock) -> Self {
        self.clock = clock;
        self
    }

    /// One round. `observed` carries what earlier rounds read of the Lease and since when.
    pub async fn round(&self, observed: &mut Option<Observation>) -> kube::Result<LeaseDecision> {
        let Some(current) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec::default()),
            };
            let lease = self.claimed(lease, Claim::Create);
            return decided(self.api.create(&PostParams::default(), &lease).await);
        };
        let record = Record::of(&current, self.lease_duration);
        let now = Instant::now();
        let observation = match observed {
            Some(observation) => {
                observation.update(record, now);
                observation
            }
            None => observed.insert(Observation::new(record, now)),
        };
        let ours = observation.record.holder == self.identity;
        if !ours && !observation.expired(now) {
            return Ok(LeaseDecision::Following);
        }
        let lease = self.claimed(current, if ours { Claim::Renew } else { Claim::Take });
        decided(self.api.replace(&self.name, &PostParams::default(), &lease).await)
    }

    /// Gives the Lease up, as client-go's `ReleaseOnCancel` does: no holder, a 1 s duration, and
    /// the resourceVersion we last wrote, so a Lease someone else took meanwhile stays theirs.
    pub async fn release(&self, held: &Lease) -> kube::Result<()> {
        let now = MicroTime(self.clock.now());
        let mut lease = held.clone();
        let spec = lease.spec.get_or_insert_with(Default::default);
        spec.holder_identity = Some(String::new());
        spec.lease_duration_seconds = Some(1);
        spec.acquire_time = Some(now.clone());
        spec.renew_time = Some(now);
        self.api.replace(&self.name, &PostParams::default(), &lease).await?;
        Ok(())
    }

    /// `lease` with us as holder, renewed now.
    fn claimed(&self, mut lease: Lease, claim: Claim) -> Lease {
        let now = MicroTime(self.clock.now());
        let spec = lease.spec.get_or_insert_with(Default::default);
        match claim {
            Claim::Create => spec.lease_transitions = Some(0),
            Claim::Take => spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1)),
            Claim::Renew => {}
        }
        if claim != Claim::Renew {
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(now.clone());
        }
        spec.renew_time = Some(now);
        spec.lease_duration_seconds = Some(whole_seconds(self.lease_duration));
        lease
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    Create,
    /// Ours already: holder, acquire time and transitions stay.
    Renew,
    /// Someone else's, released or left unchanged for its duration: one more transition.
    Take,
}

/// A successful write makes us leader; a conflict means someone else wrote first.
fn decided(result: kube::Result<Lease>) -> kube::Result<LeaseDecision> {
    match result {
        Ok(lease) => Ok(LeaseDecision::Leading(Box::new(lease))),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(LeaseDecision::Following),
        Err(error) => Err(error),
    }
}

/// `leaseDurationSeconds`: rounded up, so followers never wait less than we claim.
fn whole_seconds(duration: Duration) -> i32 {
    let seconds = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    i32::try_from(seconds).unwrap_or(i32::MAX).max(1)
}
