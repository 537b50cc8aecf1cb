//! `shunt run`: the same compile and proxy as `serve`, fed live from the Kubernetes API.
//!
//! ```text
//! watch.rs stores ─changed─▶ debounce ─▶ compile ─▶ publish (every replica)
//!                                           └─▶ leader only: status.rs writes, events.rs Events,
//!                                               dns/ CoreDNS rules (--manage-coredns)
//! leader.rs Lease ─────────────────────────────────┘
//! ```

use std::{sync::Arc, time::Duration};

use anyhow::Context as _;

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
    dns::{ManagedDns, ManagedDnsConfig, served_hosts},
    events::{EventReporter, uid_in},
    leader::{Elector, LeaseConfig, WallClock},
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
    /// Shadowed hosts left out of the CoreDNS rules, with why.
    /// Shadowed hosts kept out of DNS (`--shadow-rewrite refused`), with why.
    refused: Vec<crate::dns::Refusal>,
}

/// The leader's writers besides Events.
struct Writers {
    status: Option<StatusWriter>,
    coredns: Option<ManagedDns>,
    /// For the hosts managed DNS refuses (`DnsRewriteRefused`).
    metrics: ControllerMetrics,
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let identity = args.pod_name.clone().unwrap_or_else(default_identity);
    let lease = LeaseConfig {
        namespace: args.pod_namespace.clone(),
        name: args.election_id.clone(),
        identity: identity.clone(),
        lease_duration: args.election.lease_duration,
        renew_deadline: args.election.renew_deadline,
        retry_period: args.election.retry_period,
        clock: WallClock {
            offset: args.election.lease_clock_offset,
        },
    };
    lease
        .validate()
        .context("--lease-duration, --renew-deadline and --retry-period")?;
    let clients = Clients::connect(args.kubeconfig.as_deref()).await?;
    let elector = Elector::new(clients.api.clone(), lease)?;
    let client = clients.api;
    let mut registry = shunt_proxy::Registry::default();
    let dataplane = Dataplane::new(&mut registry, args.proxy.metrics_options());
    let metrics = ControllerMetrics::register(&mut registry);
    elector.register(&mut registry);
    let shutdown = Shutdown::on_signals();

    let stores = Stores::spawn(&clients.watch, &args.watch_namespaces);
    let (outcome_tx, outcome_rx) = watch::channel(None::<CompileOutcome>);
    let options = args.classes.compile_options();
    let control = ControlPlane::new(dataplane.publisher, metrics.clone());
    let (loop_stores, stop) = (stores.clone(), shutdown.clone().requested());
    let dns_rules = args.dns_rules.clone();
    crate::control::spawn_thread(move || async move {
        tokio::select! {
            () = compile_loop(loop_stores, options, dns_rules, control, outcome_tx) => {}
            () = stop => {}
        }
    })?;

    let (leader_tx, leader_rx) = watch::channel(false);
    let mut election = tokio::spawn(elector.run(leader_tx, shutdown.clone().requested()));
    let writers = Writers {
        status: args
            .publish_address()
            .map(|address| StatusWriter::new(client.clone(), address)),
        coredns: managed_dns(&client, &args)?,
        metrics,
    };
    let writers = tokio::spawn(leader_writes(client, stores, writers, identity, leader_rx, outcome_rx));

    let served = crate::dataplane::serve(&args.proxy, dataplane.reader, dataplane.metrics, registry, shutdown).await;
    // The elector saw the same shutdown and is releasing the Lease (bounded by a retry period):
    // let it finish, so the next replica leads at once instead of after a lease duration.
    let release = args.election.retry_period + Duration::from_secs(1);
    if tokio::time::timeout(release, &mut election).await.is_err() {
        election.abort();
    }
    writers.abort();
    served
}

/// Two clients from one kubeconfig, both with a connect timeout.
pub struct Clients {
    /// Lists and watches. No read timeout: a healthy watch is silent until something changes, and
    /// kube-runtime's watcher already gives up on one silent past its `timeoutSeconds` (290 s)
    /// plus a margin, when the server should have ended it.
    pub watch: Client,
    /// Every other request (Lease, status, Events, CoreDNS): an answer must start arriving
    /// within [`API_READ_TIMEOUT`] of the request being sent.
    pub api: Client,
}

/// How long connecting to the API server may take.
const API_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a single request may wait for its answer to start (and between reads).
const API_READ_TIMEOUT: Duration = Duration::from_secs(10);

impl Clients {
    /// From `--kubeconfig`, else the way kubectl finds one (KUBECONFIG, ~/.kube/config,
    /// in-cluster service account).
    pub async fn connect(kubeconfig: Option<&std::path::Path>) -> anyhow::Result<Clients> {
        let mut config = match kubeconfig {
            Some(path) => {
                let kubeconfig = Kubeconfig::read_from(path)
                    .map_err(|error| anyhow::anyhow!("reading kubeconfig {}: {error}", path.display()))?;
                Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
            }
            None => Config::infer().await?,
        };
        info!(server = %config.cluster_url, "Connecting to the Kubernetes API");
        config.connect_timeout = Some(API_CONNECT_TIMEOUT);
        config.read_timeout = None;
        let watch = Client::try_from(config.clone())?;
        config.read_timeout = Some(API_READ_TIMEOUT);
        // Count the read timeout from each request, not from when its pooled connection went idle.
        config.reset_reader_on_write = true;
        let api = Client::try_from(config)?;
        Ok(Clients { watch, api })
    }
}

/// A client for one-off requests (`shunt dns`); see [`Clients::connect`].
pub async fn connect(kubeconfig: Option<&std::path::Path>) -> anyhow::Result<Client> {
    Ok(Clients::connect(kubeconfig).await?.api)
}

fn managed_dns(client: &Client, args: &RunArgs) -> anyhow::Result<Option<ManagedDns>> {
    let Some(publish_service) = args.publish_service.as_ref().filter(|_| args.manage_coredns) else {
        return Ok(None);
    };
    let target = args.coredns_target;
    let configmap = args
        .coredns_configmap
        .clone()
        .unwrap_or_else(|| ("kube-system".to_string(), target.default_configmap().to_string()));
    let release = args
        .dns_rules
        .release(publish_service)
        .map_err(|error| anyhow::anyhow!("--publish-service: {error}; name the CoreDNS block with --release"))?;
    let config = ManagedDnsConfig {
        configmap,
        target,
        release,
        service_fqdn: args.dns_rules.service_fqdn(publish_service),
        policy: args.dns_rules.policy(),
        coredns_version: args.coredns_version,
    };
    Ok(Some(ManagedDns::new(client.clone(), config)))
}

fn default_identity() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| format!("shunt-{}", std::process::id()))
}

/// Runs on the control thread: snapshot, compile and table build never touch a proxy worker.
async fn compile_loop(
    stores: Stores,
    options: crate::compile::CompileOptions,
    dns_rules: crate::cli::DnsRuleArgs,
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
            refused: dns_rules.shadow_refusals(&compiled.shadow),
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
    let mut dns_refused = Vec::new();
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
        let work = async {
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
            let mut diagnostics = outcome.diagnostics.clone();
            if let Some(dns) = &mut writers.coredns {
                let refused = dns.sync(&outcome.hosts, &outcome.refused).await;
                let refused =
                    crate::dns::refusal_diagnostics(&refused, ingresses.iter().map(|i| &**i), &outcome.served);
                writers.metrics.set_dns_refusals(refused.len());
                diagnostics.extend(refused.iter().cloned());
                crate::dns::log_new(&mut dns_refused, refused);
            }
            events
                .report(&diagnostics, |ns, name| {
                    uid_in(ingresses.iter().map(|i| &**i), ns, name)
                })
                .await;
        };
        tokio::select! {
            () = work => {}
            _ = stepped_down.wait_for(|leads| !*leads) => info!("No longer the leader; stopped writing"),
        }
    }
}
