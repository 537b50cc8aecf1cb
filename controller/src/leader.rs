//! Leader election on a `coordination.k8s.io/v1` Lease. Only the leader writes Ingress status and
//! Events; every replica serves traffic whatever its role.
//!
//! Each round reads the Lease and then renews it (ours), takes it (expired or unheld), or leaves
//! it (someone else's, still fresh). Writes carry the read's resourceVersion, so when two
//! replicas race for an expired Lease the API server lets exactly one win (409 for the other).

use std::time::{Duration, Instant};

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::{SignedDuration, Timestamp},
};
use kube::{
    Api, Client,
    api::{PostParams, entry::Entry},
};
use tokio::sync::watch;
use tracing::{info, warn};

#[derive(Clone, Debug)]
pub struct LeaseConfig {
    pub namespace: String,
    pub name: String,
    /// This replica, usually the pod name. Must be unique among replicas.
    pub identity: String,
    /// How long a holder that stopped renewing keeps the Lease.
    pub lease_duration: Duration,
    /// How often the holder renews; well below `lease_duration`.
    pub renew_interval: Duration,
}

pub struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
}

impl Elector {
    pub fn new(client: Client, config: LeaseConfig) -> Self {
        Elector {
            api: Api::namespaced(client, &config.namespace),
            config,
        }
    }

    /// One election round: true when this replica holds the Lease afterwards.
    pub async fn try_acquire_or_renew(&self) -> kube::Result<bool> {
        let now = Timestamp::now();
        let identity = self.config.identity.as_str();
        let duration_secs = i32::try_from(self.config.lease_duration.as_secs())
            .unwrap_or(i32::MAX)
            .max(1);
        let entry = self.api.entry(&self.config.name).await?;
        let result = match entry {
            Entry::Vacant(vacant) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.config.name.clone()),
                        ..Default::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(identity.to_string()),
                        lease_duration_seconds: Some(duration_secs),
                        acquire_time: Some(MicroTime(now)),
                        renew_time: Some(MicroTime(now)),
                        lease_transitions: Some(0),
                        ..Default::default()
                    }),
                };
                let mut created = vacant.insert(lease);
                created.commit(&PostParams::default()).await
            }
            Entry::Occupied(mut occupied) => {
                let spec = occupied.get().spec.clone().unwrap_or_default();
                let ours = spec.holder_identity.as_deref() == Some(identity);
                if !ours && !is_expired(&spec, now) {
                    return Ok(false);
                }
                let spec = occupied.get_mut().spec.get_or_insert_with(Default::default);
                if !ours {
                    spec.holder_identity = Some(identity.to_string());
                    spec.acquire_time = Some(MicroTime(now));
                    spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
                }
                spec.renew_time = Some(MicroTime(now));
                spec.lease_duration_seconds = Some(duration_secs);
                occupied.commit(&PostParams::default()).await
            }
        };
        match result {
            Ok(()) => Ok(true),
            // Someone else wrote the Lease between our read and write: they won this round.
            Err(kube::api::entry::CommitError::Save(kube::Error::Api(status))) if status.code == 409 => Ok(false),
            Err(kube::api::entry::CommitError::Save(error)) => Err(error),
            Err(kube::api::entry::CommitError::Validate(error)) => Err(kube::Error::Service(
                format!("lease {}: {error}", self.config.name).into(),
            )),
        }
    }

    /// Runs rounds until `shutdown`, reporting leadership on `leader`. A leader that cannot reach
    /// the API keeps its role until its Lease would have expired, then steps down.
    pub async fn run(self, leader: watch::Sender<bool>, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut last_renewal: Option<Instant> = None;
        loop {
            let holds = match self.try_acquire_or_renew().await {
                Ok(true) => {
                    last_renewal = Some(Instant::now());
                    true
                }
                Ok(false) => {
                    last_renewal = None;
                    false
                }
                Err(error) => {
                    warn!(%error, lease = %self.config.name, "Lease round failed");
                    last_renewal.is_some_and(|at| at.elapsed() < self.config.lease_duration)
                }
            };
            leader.send_if_modified(|current| {
                if *current != holds {
                    info!(identity = %self.config.identity, leader = holds, "Leadership changed");
                    *current = holds;
                    true
                } else {
                    false
                }
            });
            tokio::select! {
                () = tokio::time::sleep(self.config.renew_interval) => {}
                () = &mut shutdown => return,
            }
        }
    }
}

/// A Lease nobody holds, or whose holder has not renewed within its duration.
fn is_expired(spec: &LeaseSpec, now: Timestamp) -> bool {
    let Some(_) = spec.holder_identity.as_deref().filter(|holder| !holder.is_empty()) else {
        return true;
    };
    let Some(renewed) = spec.renew_time.as_ref().or(spec.acquire_time.as_ref()) else {
        return true;
    };
    let duration = SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(15)));
    renewed.0.checked_add(duration).is_ok_and(|expiry| expiry < now)
}
#[cfg(test)]
mod tests;
