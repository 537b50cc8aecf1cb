//! What the leader writes after each compile (and on becoming leader): Ingress status, Gateway
//! API status (`status/gateway.rs`), the CoreDNS rules with --manage-coredns, and new
//! diagnostics as Events.

use std::sync::Arc;

use crate::objects::Ingress;
use tokio::sync::watch;
use tracing::info;

use super::CompileOutcome;
use crate::{
    compile::Diagnostic,
    dns::ManagedDns,
    events::{EventReporter, uid_in},
    metrics::ControllerMetrics,
    status::{StatusWriter, gateway::GatewayStatusWriter},
    watch::Stores,
};

/// The leader's writers.
pub(super) struct Writers {
    pub(super) status: Option<StatusWriter>,
    /// Gateway API status (`--gateway-api`).
    pub(super) gateway: Option<GatewayStatusWriter>,
    pub(super) coredns: Option<ManagedDns>,
    pub(super) events: EventReporter,
    /// For the hosts managed DNS refuses (`DnsRewriteRefused`).
    pub(super) metrics: ControllerMetrics,
    /// The DNS refusals logged so far, so each is logged once while it lasts.
    pub(super) dns_refused: Vec<Diagnostic>,
}

/// While this replica leads: after each compile (and on becoming leader), sync status and
/// report new diagnostics as Events.
pub(super) async fn leader_writes(
    stores: Stores,
    mut writers: Writers,
    mut leader: watch::Receiver<bool>,
    mut outcomes: watch::Receiver<Option<Arc<CompileOutcome>>>,
) {
    loop {
        tokio::select! {
            changed = leader.changed() => if changed.is_err() { return },
            changed = outcomes.changed() => if changed.is_err() { return },
        }
        if !*leader.borrow_and_update() {
            continue;
        }
        let Some(outcome) = outcomes.borrow_and_update().clone() else {
            continue;
        };
        // Writes still in flight when leadership ends are dropped: another replica may lead now.
        let mut stepped_down = leader.clone();
        tokio::select! {
            () = writers.write(&stores, &outcome) => crate::residency::after_main_thread_work(),
            _ = stepped_down.wait_for(|leads| !*leads) => info!("No longer the leader; stopped writing"),
        }
    }
}

// === impl Writers ===

impl Writers {
    /// Syncs status and the CoreDNS rules with one compile's outcome, then reports its new
    /// diagnostics (and the DNS refusals) as Events.
    async fn write(&mut self, stores: &Stores, outcome: &CompileOutcome) {
        let ingresses: Vec<Arc<Ingress>> = stores.ingresses().collect();
        if let Some(status) = &mut self.status {
            let report = status.sync(ingresses.iter().cloned(), &outcome.served).await;
            if report != Default::default() {
                info!(
                    written = report.written,
                    cleared = report.cleared,
                    failed = report.failed,
                    "Status synced"
                );
            }
        }
        if let (Some(writer), Some(gateway)) = (&mut self.gateway, &outcome.gateway) {
            let (status, objects) = &**gateway;
            let report = writer.sync(status, objects).await;
            if report != Default::default() {
                info!(
                    written = report.written,
                    failed = report.failed,
                    "Gateway API status synced"
                );
            }
        }
        let mut diagnostics = outcome.diagnostics.clone();
        if let Some(dns) = &mut self.coredns {
            let refused = dns.sync(&outcome.hosts, &outcome.refused, &outcome.services).await;
            let refused = crate::dns::refusal_diagnostics(&refused, ingresses.iter().map(|i| &**i), &outcome.served);
            self.metrics.set_dns_refusals(refused.len());
            diagnostics.extend(refused.iter().cloned());
            crate::dns::log_new(&mut self.dns_refused, refused);
        }
        self.events
            .report(&diagnostics, |ns, name| {
                uid_in(ingresses.iter().map(|i| &**i), ns, name)
            })
            .await;
    }
}
