//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's guarantees. Only the
//! leader writes Ingress status, Events and CoreDNS; every replica serves traffic whatever its role.
//!
//! ```text
//! round (lease.rs, bounded by a timeout) ─▶ Leading { renewed: start of the round } ─▶ leader = true
//!    every retry period                     └ not renewed by renewed + renew deadline ─▶ leader = false
//! follower: record.rs counts lease duration from when it first read the current record
//! SIGTERM while leading: leader = false, then the Lease is released (holder cleared)
//! ```
//!
//! Why no two replicas lead at once: a leader stops `renew_deadline` after the *start* of its
//! last successful round, on its own monotonic clock. A follower takes a held Lease only after
//! reading the same record (same resourceVersion) for `lease_duration`, also on its own monotonic
//! clock, and only with a write conditional on that resourceVersion. The record's write came after
//! the leader's round started and before the follower's first read, so the follower takes over
//! at least `lease_duration - renew_deadline` after the leader stopped. Wall clocks (`renewTime`)
//! play no part.

mod lease;
mod record;

use std::{future::Future, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use prometheus_client::{metrics::gauge::Gauge, registry::Registry};
use tokio::{sync::watch, time::Instant};
use tracing::{info, warn};

pub use self::lease::WallClock;
use self::{
    lease::{LeaseApi, LeaseDecision},
    record::Observation,
};

#[derive(Clone, Debug)]
pub struct LeaseConfig {
    pub namespace: String,
    pub name: String,
    /// This replica, usually the pod name. Must be unique among replicas.
    pub identity: String,
    /// How long followers wait, after the Lease last changed, before taking it.
    pub lease_duration: Duration,
    /// How long after the start of its last successful renewal the leader keeps leading. Must be
    /// shorter than `lease_duration`: the difference is the safety margin.
    pub renew_deadline: Duration,
    /// Time between rounds.
    pub retry_period: Duration,
    pub clock: WallClock,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("the renew deadline ({renew:?}) must be shorter than the lease duration ({lease:?})")]
    RenewNotBelowLease { renew: Duration, lease: Duration },
    #[error("the retry period ({retry:?}) must be above zero and shorter than the renew deadline ({renew:?})")]
    RetryNotBelowRenew { retry: Duration, renew: Duration },
}

pub struct Elector {
    lease: LeaseApi,
    config: LeaseConfig,
    /// 1 while leading.
    gauge: Gauge,
}

/// Where this replica stands.
enum Role {
    Following,
    Leading {
        /// When the last successful round started: leadership ends `renew_deadline` after it.
        renewed: Instant,
        /// The Lease as we last wrote it, for the release.
        lease: Box<Lease>,
    },
}

// === impl LeaseConfig ===

impl LeaseConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.renew_deadline >= self.lease_duration {
            return Err(ConfigError::RenewNotBelowLease {
                renew: self.renew_deadline,
                lease: self.lease_duration,
            });
        }
        if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            return Err(ConfigError::RetryNotBelowRenew {
                retry: self.retry_period,
                renew: self.renew_deadline,
            });
        }
        Ok(())
    }
}

// === impl Elector ===

impl Elector {
    pub fn new(client: Client, config: LeaseConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        let lease = LeaseApi::new(
            client,
            &config.namespace,
            &config.name,
            &config.identity,
            config.lease_duration,
        )
        .with_clock(config.clock);
        Ok(Elector {
            lease,
            config,
            gauge: Gauge::default(),
        })
    }

    /// Registers `shunt_leader`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "shunt_leader",
            "1 while this replica holds the leader Lease (writes status, Events and CoreDNS), else 0",
            self.gauge.clone(),
        );
    }

    /// Runs rounds until `shutdown`, reporting leadership on `leader`; then, if leading, reports
    /// `false` and releases the Lease so another replica can lead within a retry period.
    pub async fn run(self, leader: watch::Sender<bool>, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let (renew_deadline, retry_period) = (self.config.renew_deadline, self.config.retry_period);
        let mut role = Role::Following;
        let mut observed: Option<Observation> = None;
        loop {
            let started = Instant::now();
            // A leader's round may use what is left of its deadline; a follower's, a renew deadline.
            let budget = match &role {
                Role::Leading { renewed, .. } => (*renewed + renew_deadline).saturating_duration_since(started),
                Role::Following => renew_deadline,
            };
            let outcome = tokio::select! {
                outcome = tokio::time::timeout(budget, self.lease.round(&mut observed)) => outcome,
                () = &mut shutdown => break,
            };
            role = match outcome {
                Ok(Ok(LeaseDecision::Leading(lease))) => Role::Leading {
                    renewed: started,
                    lease,
                },
                Ok(Ok(LeaseDecision::Following)) => Role::Following,
                Ok(Err(error)) => {
                    warn!(%error, lease = %self.config.name, "Lease round failed");
                    role
                }
                Err(_) => {
                    warn!(lease = %self.config.name, timeout = ?budget, "Lease round timed out");
                    role
                }
            };
            role = self.check_deadline(role);
            self.announce(&leader, &role);
            crate::residency::after_main_thread_work();
            let deadline = match &role {
                Role::Leading { renewed, .. } => *renewed + renew_deadline,
                Role::Following => started + retry_period,
            };
            tokio::select! {
                () = tokio::time::sleep_until(deadline.min(Instant::now() + retry_period)) => {}
                () = &mut shutdown => break,
            }
            role = self.check_deadline(role);
            self.announce(&leader, &role);
        }
        if let Role::Leading { lease, .. } = role {
            // Stop the writers first: once released, another replica may lead at once.
            self.announce(&leader, &Role::Following);
            match tokio::time::timeout(retry_period, self.lease.release(&lease)).await {
                Ok(Ok(())) => info!(lease = %self.config.name, "Released the Lease"),
                Ok(Err(error)) => warn!(%error, lease = %self.config.name, "Lease not released"),
                Err(_) => warn!(lease = %self.config.name, "Lease not released in time"),
            }
        }
    }

    /// A leader whose last successful round started a renew deadline ago stops leading.
    fn check_deadline(&self, role: Role) -> Role {
        match role {
            Role::Leading { renewed, .. } if renewed.elapsed() >= self.config.renew_deadline => {
                warn!(
                    lease = %self.config.name,
                    renew_deadline = ?self.config.renew_deadline,
                    "Lease not renewed within the renew deadline"
                );
                Role::Following
            }
            role => role,
        }
    }

    fn announce(&self, leader: &watch::Sender<bool>, role: &Role) {
        let leading = matches!(role, Role::Leading { .. });
        self.gauge.set(i64::from(leading));
        leader.send_if_modified(|current| {
            if *current == leading {
                return false;
            }
            info!(identity = %self.config.identity, leader = leading, "Leadership changed");
            *current = leading;
            true
        });
    }
}

#[cfg(test)]
mod tests;
