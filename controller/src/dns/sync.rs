//! `--manage-coredns` (leader only): after each compile, the rules in kube-dns's Corefile (with
//! the version gate and the guards), then the zones in node-local-dns's.
//!
//! ```text
//! hosts ─▶ policy ─▶ Stanza ─▶ prune guard ─▶ CorednsWriter (rules + view block) ─▶ reload check
//!                                                  └▶ nodelocal zones ─▶ NodeLocalWriter
//! ```

use std::time::Duration;

use kube::Client;
use shunt_spec::HostMatch;
use tokio::time::Instant;
use tracing::{info, warn};

use super::{
    event::warn_on_configmap,
    gate::{RuleForm, VersionCheck},
    guards::{Prune, PruneGuard},
    managed::{CorednsTarget, CorednsWriter, Synced},
    metrics::{DnsMetrics, flag},
    nodelocal::managed::NodeLocal,
    nodelocal::{self, managed::NodeLocalWriter},
    policy::{DnsPolicy, Refusal},
    release::Release,
    services::ServiceName,
    stanza::Stanza,
    version::CorednsVersion,
};

/// `--manage-coredns`: the writers, what shapes the rules, the version check and the guards.
pub struct ManagedDns {
    client: Client,
    configmap: (String, String),
    writer: CorednsWriter,
    node_local: NodeLocalWriter,
    release: Release,
    /// The Service FQDN every rule points at.
    target: String,
    policy: DnsPolicy,
    version: VersionCheck,
    prune: PruneGuard,
    metrics: DnsMetrics,
    /// The Corefile's `kubernetes` zones as last read.
    zones: Vec<String>,
    /// The stanza last written or found in place, and when: an unchanged stanza is checked
    /// again only after [`crate::control::RECOMPILE_EVERY`] (an operator may have edited it).
    synced: Option<(Stanza, Instant)>,
    /// The last failure, logged once until it changes.
    failing: Option<String>,
    /// The last node-local-dns sync failed: the next compile syncs again even if nothing changed.
    node_local_failed: bool,
    /// Whether the missing `reload` was reported, so it is reported once while it lasts.
    reported_no_reload: bool,
}

/// Where a [`ManagedDns`] writes and what it writes.
pub struct ManagedDnsConfig {
    pub configmap: (String, String),
    pub target: CorednsTarget,
    pub release: Release,
    pub service_fqdn: String,
    pub policy: DnsPolicy,
    /// `--coredns-version`: used when the `coredns` Deployment cannot be read.
    pub coredns_version: Option<CorednsVersion>,
    /// node-local-dns's ConfigMap, and whether to keep shunt's block in it.
    pub node_local: (String, String),
    pub manage_node_local: bool,
    pub prune_delay: Duration,
    pub metrics: DnsMetrics,
}

impl ManagedDns {
    pub fn new(client: Client, config: ManagedDnsConfig) -> Self {
        let (namespace, name) = &config.configmap;
        info!(configmap = %format!("{namespace}/{name}"), coredns_target = ?config.target, release = %config.release, "Managing CoreDNS rewrite rules");
        ManagedDns {
            writer: CorednsWriter::new(client.clone(), namespace, name, config.target),
            node_local: NodeLocalWriter::new(
                client.clone(),
                config.node_local,
                config.manage_node_local,
                config.metrics.clone(),
            ),
            version: VersionCheck::new(client.clone(), namespace, name, config.coredns_version),
            client,
            configmap: config.configmap.clone(),
            release: config.release,
            target: config.service_fqdn,
            policy: config.policy,
            prune: PruneGuard::new(config.prune_delay),
            metrics: config.metrics,
            zones: Vec::new(),
            synced: None,
            failing: None,
            node_local_failed: false,
            reported_no_reload: false,
        }
    }

    /// Brings CoreDNS and node-local-dns in line with `hosts` (unless CoreDNS is too old for
    /// the rules, or a large removal is on hold) and returns every refused host, for
    /// diagnostics: the policy's, plus `refused_elsewhere` (hosts other parts of shunt keep out
    /// of DNS, each with its reason).
    pub async fn sync(
        &mut self,
        hosts: &[HostMatch],
        refused_elsewhere: &[Refusal],
        services: &[ServiceName],
    ) -> Vec<Refusal> {
        let stanza = self.stanza(hosts, refused_elsewhere, services, &self.zones);
        let fresh = self
            .synced
            .as_ref()
            .is_some_and(|(synced, at)| *synced == stanza && at.elapsed() < crate::control::RECOMPILE_EVERY)
            && !self.node_local_failed;
        let form = match self.version.form().await {
            Some(form) if !fresh => form,
            _ => return stanza.refused().to_vec(),
        };
        if self.holds_prune(&stanza) {
            return stanza.refused().to_vec();
        }
        // The custom target's `*.server` imports come after `.:53 {` in k3s and AKS, where
        // CoreDNS refuses a view block: the rules there rewrite every query type.
        let form = match self.writer.target {
            CorednsTarget::Corefile => form,
            CorednsTarget::Custom => RuleForm::AllTypes,
        };
        let build = |zones: &[String]| self.stanza(hosts, refused_elsewhere, services, zones);
        let result = self.writer.sync(build, form).await;
        match result {
            Ok(synced) => self.synced(synced).await,
            Err(error) => {
                let message = error.to_string();
                if self.failing.as_ref() != Some(&message) {
                    warn!(%message, "CoreDNS rewrite rules not updated; retrying on the next change");
                    self.failing = Some(message);
                }
                stanza.refused().to_vec()
            }
        }
    }

    /// After a successful kube-dns sync: the reload check, then node-local-dns.
    async fn synced(&mut self, synced: Synced) -> Vec<Refusal> {
        let refused = synced.stanza.refused().to_vec();
        self.report_reload(synced.reload).await;
        let policy = self.policy.with_kubernetes_zones(&synced.zones);
        let zones = nodelocal::zones(synced.stanza.hosts(), &policy);
        let node_local = self.node_local.sync(&self.release, &zones).await;
        self.zones = synced.zones;
        // A failed node-local-dns write is retried on the next compile, not a minute later.
        self.node_local_failed = matches!(node_local, NodeLocal::Failed(_));
        self.synced = Some((synced.stanza, Instant::now()));
        self.failing = None;
        refused
    }

    /// True while a change removing most of the rules in place waits out the delay.
    fn holds_prune(&mut self, stanza: &Stanza) -> bool {
        let Some((in_place, _)) = &self.synced else {
            return false;
        };
        let (before, after) = (in_place.rules().len(), stanza.rules().len());
        let verdict = self.prune.check(before, after, Instant::now());
        flag(&self.metrics.prune_waiting, verdict != Prune::Write);
        match verdict {
            Prune::Write => false,
            Prune::Started => {
                warn!(
                    before,
                    after,
                    "Most CoreDNS rules would go at once; keeping them until the hosts stay absent for --dns-prune-delay"
                );
                true
            }
            Prune::Holding { .. } => true,
        }
    }

    async fn report_reload(&mut self, reload: bool) {
        flag(&self.metrics.corefile_without_reload, !reload);
        if reload || self.reported_no_reload {
            self.reported_no_reload = !reload;
            return;
        }
        self.reported_no_reload = true;
        let (namespace, name) = &self.configmap;
        warn!(configmap = %format!("{namespace}/{name}"), "The Corefile has no reload plugin: CoreDNS loads the rules only when its pods restart");
        let note =
            "the Corefile has no `reload` plugin, so CoreDNS does not load shunt's rules until its pods restart; \
                    add `reload` to the `.:53` block"
                .to_string();
        warn_on_configmap(&self.client, (namespace, name), "CorednsWithoutReload", note).await;
    }

    fn stanza(
        &self,
        hosts: &[HostMatch],
        refused_elsewhere: &[Refusal],
        services: &[ServiceName],
        zones: &[String],
    ) -> Stanza {
        let policy = self.policy.with_kubernetes_zones(zones);
        let mut plan = policy.plan(hosts);
        for refusal in refused_elsewhere {
            plan.refuse(refusal.host.clone(), refusal.reason.clone());
        }
        let mut stanza = Stanza::new(&self.release, &plan, &self.target);
        stanza.add_services(&policy, services);
        stanza
    }
}
