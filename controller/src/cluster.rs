//! `shunt run`: the same compile and proxy as `serve`, fed live from the Kubernetes API.
//!
//! ```text
//! watch.rs stores ─changed─▶ debounce ─▶ compile ─▶ publish (every replica)
//!                                           └─▶ leader only: status.rs writes, events.rs Events,
//!                                               dns/ CoreDNS rules (--manage-coredns)
//! leader.rs Lease ─────────────────────────────────┘
//! ```

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::networking::v1::Ingress;
use kube::{
    Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
};
use shunt_proxy::routes::spec::HostMatch;
use tokio::{sync::watch, time::Instant};
use tracing::{info, warn};

use crate::{
    cli::RunArgs,
    compile::{Diagnostic, ServedIngress},
    control::ControlPlane,
    dataplane::{Dataplane, Shutdown},
    dns::{CorednsWriter, DnsExclude, Stanza, served_hosts},
    events::{EventReporter, uid_in},
    leader::{Elector, LeaseConfig},
    metrics::ControllerMetrics,
    status::StatusWriter,
    watch::Stores,
};

/// A burst of watch events gives one compile: wait for this much quiet...
const DEBOUNCE_QUIET: Duration = Duration::from_millis(10);
/// ...but never longer than this after the first event.
const DEBOUNCE_MAX: Duration = Duration::from_millis(100);

/// What the leader's writers need from each compile.
#[derive(Clone, Default)]
struct CompileOutcome {
    served: Vec<ServedIngress>,
    diagnostics: Vec<Diagnostic>,
    /// Routed hosts, for the CoreDNS rules.
    hosts: Vec<HostMatch>,
}

/// The leader's writers besides Events.
struct Writers {
    status: Option<StatusWriter>,
    coredns: Option<ManagedDns>,
}

/// `--manage-coredns`: the writer and what shapes the rules.
struct ManagedDns {
    writer: CorednsWriter,
    target: String,
    exclude: Vec<DnsExclude>,
    /// The rules last written or found in place, and when: unchanged rules are checked again
    /// only after [`crate::standalone::RECOMPILE_EVERY`] (an operator may have edited the ConfigMap).
    synced: Option<(Stanza, Instant)>,
    /// The last failure, logged once until it changes.
    failing: Option<String>,
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let client = connect(args.kubeconfig.as_deref()).await?;
    let mut registry = shunt_proxy::Registry::default();
    let dataplane = Dataplane::new(&mut registry, args.proxy.metrics_options());
    let metrics = ControllerMetrics::register(&mut registry);
    let shutdown = Shutdown::on_signals();

    let stores = Stores::spawn(&client, &args.watch_namespaces);
    let (outcome_tx, outcome_rx) = watch::channel(None::<CompileOutcome>);
    let options = args.classes.compile_options();
    let control = ControlPlane::new(dataplane.publisher, metrics);
    let (loop_stores, stop) = (stores.clone(), shutdown.clone().requested());
    crate::control::spawn_thread(move || async move {
        tokio::select! {
            () = compile_loop(loop_stores, options, control, outcome_tx) => {}
            () = stop => {}
        }
    })?;

    let (leader_tx, leader_rx) = watch::channel(false);
    let identity = args.pod_name.clone().unwrap_or_else(default_identity);
    let elector = Elector::new(
        client.clone(),
        LeaseConfig {
            namespace: args.pod_namespace.clone(),
            name: args.election_id.clone(),
            identity: identity.clone(),
            lease_duration: Duration::from_secs(15),
            renew_interval: Duration::from_secs(5),
        },
    );
    let election = tokio::spawn(elector.run(leader_tx, shutdown.clone().requested()));
    let writers = Writers {
        status: args
            .publish_address()
            .map(|address| StatusWriter::new(client.clone(), address)),
        coredns: managed_dns(&client, &args),
    };
    let writers = tokio::spawn(leader_writes(client, stores, writers, identity, leader_rx, outcome_rx));

    let served = crate::dataplane::serve(&args.proxy, dataplane.reader, dataplane.metrics, registry, shutdown).await;
    election.abort();
    writers.abort();
    served
}

/// A client from `--kubeconfig`, else the way kubectl finds one (KUBECONFIG, ~/.kube/config,
/// in-cluster service account).
pub async fn connect(kubeconfig: Option<&std::path::Path>) -> anyhow::Result<Client> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|error| anyhow::anyhow!("reading kubeconfig {}: {error}", path.display()))?;
            Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
        }
        None => Config::infer().await?,
    };
    info!(server = %config.cluster_url, "Connecting to the Kubernetes API");
    Ok(Client::try_from(config)?)
}

fn managed_dns(client: &Client, args: &RunArgs) -> Option<ManagedDns> {
    let publish_service = args.publish_service.as_ref().filter(|_| args.manage_coredns)?;
    let target = args.coredns_target;
    let (namespace, name) = args
        .coredns_configmap
        .clone()
        .unwrap_or_else(|| ("kube-system".to_string(), target.default_configmap().to_string()));
    info!(configmap = %format!("{namespace}/{name}"), ?target, "Managing CoreDNS rewrite rules");
    Some(ManagedDns {
        writer: CorednsWriter::new(client.clone(), &namespace, &name, target),
        target: args.dns_rules.service_fqdn(publish_service),
        exclude: args.dns_rules.dns_exclude.clone(),
        synced: None,
        failing: None,
    })
}

fn default_identity() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| format!("shunt-{}", std::process::id()))
}

/// Runs on the control thread: snapshot, compile and table build never touch a proxy worker.
async fn compile_loop(
    stores: Stores,
    options: crate::compile::CompileOptions,
    mut control: ControlPlane,
    outcomes: watch::Sender<Option<CompileOutcome>>,
) {
    info!("Waiting for the first list of every watched kind");
    if stores.wait_until_ready().await.is_err() {
        warn!("A watcher stopped before its first list; not publishing");
        return;
    }
    info!("Initial lists complete");
    loop {
        let state = stores.snapshot();
        let mut task_options = options.clone();
        task_options.now = Some(k8s_openapi::jiff::Timestamp::now());
        let outcome = control.compile_and_publish(&state, &task_options, |compiled| CompileOutcome {
            served: compiled.served.clone(),
            diagnostics: compiled.diagnostics.clone(),
            hosts: served_hosts(&compiled.table),
        });
        drop(state);
        let panicked = outcome.is_none();
        if let Some(outcome) = outcome {
            outcomes.send_replace(Some(outcome));
        }

        // Nothing changed for a while: compile anyway, a certificate may have expired. Not
        // after a panic: the same objects would panic the same way.
        if panicked {
            stores.changed.notified().await;
        } else if tokio::time::timeout(crate::standalone::RECOMPILE_EVERY, stores.changed.notified())
            .await
            .is_err()
        {
            continue;
        }
        let first = Instant::now();
        loop {
            let quiet = tokio::time::timeout(DEBOUNCE_QUIET, stores.changed.notified())
                .await
                .is_err();
            if quiet || first.elapsed() >= DEBOUNCE_MAX {
                break;
            }
        }
    }
}

/// While this replica leads: after each compile (and on becoming leader), sync status and
/// report new diagnostics as Events.
async fn leader_writes(
    client: Client,
    stores: Stores,
    mut writers: Writers,
    identity: String,
    mut leader: watch::Receiver<bool>,
    mut outcomes: watch::Receiver<Option<CompileOutcome>>,
) {
    let mut events = EventReporter::new(client, Some(identity));
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
        let ingresses: Vec<Arc<Ingress>> = stores.ingresses().collect();
        if let Some(status) = &mut writers.status {
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
        events
            .report(&outcome.diagnostics, |ns, name| {
                uid_in(ingresses.iter().map(|i| &**i), ns, name)
            })
            .await;
        if let Some(dns) = &mut writers.coredns {
            dns.sync(&outcome.hosts).await;
        }
    }
}

// === impl ManagedDns ===

impl ManagedDns {
    async fn sync(&mut self, hosts: &[HostMatch]) {
        let stanza = Stanza::new(hosts, &self.target, &self.exclude);
        let fresh = self
            .synced
            .as_ref()
            .is_some_and(|(synced, at)| *synced == stanza && at.elapsed() < crate::standalone::RECOMPILE_EVERY);
        if fresh {
            return;
        }
        match self.writer.sync(&stanza).await {
            Ok(_) => {
                self.synced = Some((stanza, Instant::now()));
                self.failing = None;
            }
            Err(error) => {
                let message = error.to_string();
                if self.failing.as_ref() != Some(&message) {
                    warn!(%message, "CoreDNS rewrite rules not updated; retrying on the next change");
                    self.failing = Some(message);
                }
            }
        }
    }
}
