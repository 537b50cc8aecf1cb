//! `shunt run`: the same compile and proxy as `serve`, fed live from the Kubernetes API.
//!
//! ```text
//! watch.rs stores ─changed─▶ debounce ─▶ control::compile_loop ─▶ publish (every replica)
//!                                           └─▶ leader only (run/writes.rs): status.rs (and status/gateway.rs) writes,
//!                                               events.rs Events, dns/ CoreDNS rules (--manage-coredns)
//! leader.rs Lease ─────────────────────────────────┘
//! ```

use std::{path::PathBuf, sync::Arc, time::Duration};

use anyhow::Context as _;
use clap::Args;
use kube::Client;
use shunt_spec::HostMatch;
use tokio::{sync::watch, time::Instant};
use tracing::{info, warn};

use super::{
    ClassArgs, DnsRuleArgs, LogArgs, ProxyArgs,
    clients::Clients,
    parse::{Span, parse_namespaced, parse_signed_duration},
};
use crate::{
    cmd::dataplane::{Dataplane, Shutdown},
    compile::{CompileOptions, Diagnostic, ServedIngress},
    control::{ControlPlane, Source},
    dns::{ManagedDns, ManagedDnsConfig, served_hosts},
    events::EventReporter,
    leader::{Elector, LeaseConfig, WallClock},
    metrics::ControllerMetrics,
    sources::gateway::GatewayStatus,
    status::{
        StatusWriter,
        gateway::{GatewayStatusWriter, Objects as GatewayObjects},
    },
    watch::{Stores, WatchedKinds},
};

mod topology;
mod writes;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Kubeconfig file; by default found the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Only watch these namespaces (repeatable); all namespaces by default.
    #[arg(long = "watch-namespace", value_name = "NAMESPACE")]
    pub watch_namespaces: Vec<String>,
    /// Write this Service's ClusterIP into the status of our Ingresses (`NAMESPACE/NAME`).
    #[arg(long, value_parser = parse_namespaced)]
    pub publish_service: Option<(String, String)>,
    /// With --publish-service: write `NAME.NAMESPACE.svc.<--cluster-domain>` instead of its ClusterIP.
    #[arg(long, requires = "publish_service")]
    pub publish_hostname: bool,
    /// Write these addresses or hostnames into status (comma-separated), instead of a Service's.
    #[arg(long, value_delimiter = ',', conflicts_with = "publish_service")]
    pub publish_status_address: Vec<String>,
    /// Name of the Lease used to elect the one replica that writes status and Events.
    #[arg(long, default_value = "shunt-leader")]
    pub election_id: String,
    /// Namespace of the Lease (the pod's own).
    #[arg(long, env = "POD_NAMESPACE", default_value = "default")]
    pub pod_namespace: String,
    /// This replica's identity in the Lease (the pod name).
    #[arg(long, env = "POD_NAME")]
    pub pod_name: Option<String>,
    #[command(flatten)]
    pub election: ElectionArgs,
    /// Keep CoreDNS rewriting every served host to --publish-service (the leader writes).
    #[arg(long, requires = "publish_service")]
    pub manage_coredns: bool,
    /// Where the rules go with --manage-coredns.
    #[arg(long, value_enum, default_value_t = crate::dns::CorednsTarget::Corefile)]
    pub coredns_target: crate::dns::CorednsTarget,
    /// The ConfigMap (NAMESPACE/NAME); kube-system/coredns, or kube-system/coredns-custom for
    /// --coredns-target custom.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub coredns_configmap: Option<(String, String)>,
    /// The CoreDNS version, when the `coredns` Deployment next to the ConfigMap cannot be read
    /// (rules are written only for 1.8.4 and later).
    #[arg(long, value_name = "VERSION")]
    pub coredns_version: Option<crate::dns::CorednsVersion>,
    /// node-local-dns's ConfigMap (NAMESPACE/NAME); with --manage-coredns, when it exists, shunt's
    /// block in its Corefile sends the served names' zones to kube-dns.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME", default_value = "kube-system/node-local-dns")]
    pub node_local_dns_configmap: (String, String),
    /// With --manage-coredns: keep shunt's block in node-local-dns's Corefile; `false` only
    /// reports (log, Event, metric) that its pods resolve the served hosts past shunt.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub manage_node_local_dns: bool,
    /// A change that would remove more than half of the managed DNS rules (or all) waits this
    /// long, and happens only if the hosts are still absent then.
    #[arg(long, default_value_t = Span(DNS_PRUNE_DELAY))]
    pub dns_prune_delay: Span,
    /// Watch the Gateway API kinds once their CRDs are found (`false`: never look, as when RBAC
    /// does not grant them).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub gateway_api: bool,
    #[command(flatten)]
    pub dns_rules: DnsRuleArgs,
    #[command(flatten)]
    pub proxy: ProxyArgs,
    #[command(flatten)]
    pub classes: ClassArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

impl RunArgs {
    /// The Lease this replica competes for, as `identity`.
    fn lease(&self, identity: String) -> LeaseConfig {
        LeaseConfig {
            namespace: self.pod_namespace.clone(),
            name: self.election_id.clone(),
            identity,
            lease_duration: self.election.lease_duration.0,
            renew_deadline: self.election.renew_deadline.0,
            retry_period: self.election.retry_period.0,
            clock: WallClock {
                offset: self.election.lease_clock_offset,
            },
        }
    }

    /// Where status addresses come from, if anywhere.
    pub fn publish_address(&self) -> Option<crate::status::PublishAddress> {
        use crate::status::PublishAddress;
        if let Some(service) = &self.publish_service {
            let (namespace, name) = service.clone();
            return Some(if self.publish_hostname {
                PublishAddress::ServiceHostname {
                    hostname: self.dns_rules.service_fqdn(service),
                }
            } else {
                PublishAddress::ServiceIp { namespace, name }
            });
        }
        (!self.publish_status_address.is_empty()).then(|| PublishAddress::Fixed(self.publish_status_address.clone()))
    }
}

/// `--dns-prune-delay`.
const DNS_PRUNE_DELAY: Duration = Duration::from_secs(5 * 60);
/// client-go's leaderelection defaults: `--lease-duration`, `--renew-deadline`, `--retry-period`.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// Leader election timing, as client-go's leaderelection has it.
#[derive(Clone, Debug, Args)]
pub struct ElectionArgs {
    /// How long followers wait, after the Lease last changed, before taking it over.
    #[arg(long, default_value_t = Span(LEASE_DURATION))]
    pub lease_duration: Span,
    /// The leader stops leading when it has not renewed for this long (counted from the start of
    /// its last successful renewal); shorter than --lease-duration.
    #[arg(long, default_value_t = Span(RENEW_DEADLINE))]
    pub renew_deadline: Span,
    /// Time between election rounds.
    #[arg(long, default_value_t = Span(RETRY_PERIOD))]
    pub retry_period: Span,
    /// Tests only: shifts the wall clock used for the times written into the Lease (e.g. `60s`,
    /// `-60s`), to play replicas whose clocks disagree.
    #[arg(long, hide = true, default_value_t = k8s_openapi::jiff::SignedDuration::ZERO, allow_hyphen_values = true, value_parser = parse_signed_duration)]
    pub lease_clock_offset: k8s_openapi::jiff::SignedDuration,
}

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
    /// Shadowed hosts kept out of DNS (`--shadow-rewrite refused`), with why.
    refused: Vec<crate::dns::Refusal>,
    /// LoadBalancer Services' hostnames (`--dns-loadbalancer-services`).
    services: Vec<crate::dns::services::ServiceName>,
    /// The Gateway API status and the objects it was computed from, when there are any.
    gateway: Option<Arc<(GatewayStatus, GatewayObjects)>>,
}

/// Watches, compiles and serves until SIGTERM/SIGINT; the elected leader also writes.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    args.classes.check()?;
    let identity = args.pod_name.clone().unwrap_or_else(default_identity);
    let lease = args.lease(identity.clone());
    lease
        .validate()
        .context("--lease-duration, --renew-deadline and --retry-period")?;
    let clients = Clients::connect(args.kubeconfig.as_deref()).await?;
    let elector = Elector::new(clients.api.clone(), lease)?;
    let client = clients.api;
    let mut registry = shunt_proxy::dataplane::Registry::default();
    let mut dataplane = Dataplane::new(&mut registry, args.proxy.metrics_options());
    let place = topology::resolve(&client, args.proxy.topology()).await;
    dataplane.publisher.set_topology(place);
    let metrics = ControllerMetrics::register(&mut registry);
    let dns_metrics = crate::dns::DnsMetrics::register(&mut registry);
    elector.register(&mut registry);
    let shutdown = Shutdown::on_signals();

    let options = args.classes.compile_options();
    let nginx_config = crate::shadow::serves_nginx(&options).then_some(&options.shadow.nginx_configmap);
    let qcloud = crate::shadow::serves_qcloud(&options);
    let stores = Stores::spawn(
        &clients.watch,
        &args.watch_namespaces,
        nginx_config,
        WatchedKinds {
            qcloud,
            gateway_api: args.gateway_api,
        },
    );
    let (outcome_tx, outcome_rx) = watch::channel(None::<Arc<CompileOutcome>>);
    let source = StoreSource {
        stores: stores.clone(),
        dns_rules: args.dns_rules.clone(),
        outcomes: outcome_tx,
    };
    let options = args.proxy.with_gateway_ports(args.classes.compile_options())?;
    let stop = shutdown.clone().requested();
    let control = ControlPlane::new(dataplane.publisher, metrics.clone());
    crate::control::spawn_thread(move || crate::control::compile_loop(source, options, control, stop))?;

    let (leader_tx, leader_rx) = watch::channel(false);
    let mut election = tokio::spawn(elector.run(leader_tx, shutdown.clone().requested()));
    let writers = writes::Writers {
        status: args
            .publish_address()
            .map(|address| StatusWriter::new(client.clone(), address)),
        gateway: args
            .gateway_api
            .then(|| GatewayStatusWriter::new(client.clone(), args.publish_address())),
        coredns: managed_dns(&client, &args, dns_metrics)?,
        events: EventReporter::new(client, Some(identity)),
        metrics,
        dns_refused: Vec::new(),
    };
    let writers = tokio::spawn(writes::leader_writes(stores, writers, leader_rx, outcome_rx));

    let served = super::dataplane::serve(&args.proxy, dataplane.reader, dataplane.metrics, registry, shutdown).await;
    // The elector saw the same shutdown and is releasing the Lease (bounded by a retry period):
    // let it finish, so the next replica leads at once instead of after a lease duration.
    let release = args.election.retry_period.0 + Duration::from_secs(1);
    if tokio::time::timeout(release, &mut election).await.is_err() {
        election.abort();
    }
    writers.abort();
    served
}

fn managed_dns(client: &Client, args: &RunArgs, metrics: crate::dns::DnsMetrics) -> anyhow::Result<Option<ManagedDns>> {
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
        node_local: args.node_local_dns_configmap.clone(),
        manage_node_local: args.manage_node_local_dns,
        prune_delay: args.dns_prune_delay.0,
        metrics,
    };
    Ok(Some(ManagedDns::new(client.clone(), config)))
}

/// The Gateway API objects a compile read, for the status writer.
fn gateway_objects(state: &crate::compile::ClusterState) -> GatewayObjects {
    GatewayObjects {
        classes: state.gateway_classes.clone(),
        gateways: state.gateways.clone(),
        routes: state.http_routes.clone(),
        grpc_routes: state.grpc_routes.clone(),
    }
}

fn default_identity() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| format!("shunt-{}", std::process::id()))
}

/// The API's stores as the compile loop's source; each compile's outcome goes to the leader's
/// writers.
struct StoreSource {
    stores: Stores,
    dns_rules: DnsRuleArgs,
    outcomes: watch::Sender<Option<Arc<CompileOutcome>>>,
}

impl Source for StoreSource {
    async fn ready(&mut self, _: &ControllerMetrics) -> bool {
        info!("Waiting for the first list of every watched kind");
        if self.stores.wait_until_ready().await.is_err() {
            warn!("A watcher stopped before its first list; not publishing");
            return false;
        }
        info!("Initial lists complete");
        true
    }

    /// The first change, then until changes pause (or the debounce's limit).
    async fn changed(&mut self, _: &ControllerMetrics) {
        self.stores.changed.notified().await;
        let first = Instant::now();
        loop {
            let quiet = tokio::time::timeout(DEBOUNCE_QUIET, self.stores.changed.notified())
                .await
                .is_err();
            if quiet || first.elapsed() >= DEBOUNCE_MAX {
                return;
            }
        }
    }

    fn compile(&mut self, control: &mut ControlPlane, options: &CompileOptions) -> Option<()> {
        let state = self.stores.snapshot();
        let outcome = control.compile_and_publish(&state, options, |compiled| CompileOutcome {
            served: compiled.served.clone(),
            diagnostics: compiled.diagnostics.clone(),
            hosts: served_hosts(&compiled.table),
            refused: self.dns_rules.shadow_refusals(&compiled.shadow),
            services: self.dns_rules.service_names(state.services.iter().map(|s| &**s)),
            gateway: compiled
                .gateway
                .clone()
                .map(|status| Arc::new((status, gateway_objects(&state)))),
        });
        drop(state);
        self.outcomes.send_replace(Some(Arc::new(outcome?)));
        Some(())
    }
}
