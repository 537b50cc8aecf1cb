//! Command-line arguments, shared by every subcommand that serves traffic.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};
use shunt_proxy::{
    forward::ProxyOptions, headers::TrustedProxies, server::ServerOptions, tls, upstream::ClientOptions,
};

use crate::compile::CompileOptions;

#[derive(Debug, Parser)]
#[command(
    name = "shunt",
    version,
    about = "In-cluster Kubernetes ingress: host+path straight to pod endpoints"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once per process")]
pub enum Command {
    /// Serve Ingress manifests from files, no cluster needed; edits apply live.
    Serve(ServeArgs),
    /// Start example backends on 127.0.0.11-14 and serve the bundled example manifests.
    Demo(DemoArgs),
    /// Run in a cluster: watch the Kubernetes API, publish Ingress status, report problems as Events.
    Run(RunArgs),
    /// Print the CoreDNS rewrite rules that point every host shunt serves at its Service.
    Dns(DnsArgs),
}

#[derive(Debug, Args)]
pub struct DnsArgs {
    /// Read the objects from these manifest files or directories instead of the API; repeatable.
    #[arg(long = "manifests", short = 'f', value_name = "PATH", conflicts_with = "kubeconfig")]
    pub manifests: Vec<PathBuf>,
    /// Kubeconfig file; by default found the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Only list these namespaces (repeatable); all namespaces by default.
    #[arg(long = "watch-namespace", value_name = "NAMESPACE")]
    pub watch_namespaces: Vec<String>,
    /// shunt's Service (NAMESPACE/NAME): the name every host is rewritten to.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub publish_service: (String, String),
    /// `block`: the marker block for the Corefile's `.:53 {`; `override`: a coredns-custom key.
    #[arg(long, value_enum, default_value_t = DnsFormat::Block)]
    pub format: DnsFormat,
    #[command(flatten)]
    pub rules: DnsRuleArgs,
    #[command(flatten)]
    pub classes: ClassArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DnsFormat {
    Block,
    Override,
}

/// What shapes the rewrite rules, shared by `dns` and `run --manage-coredns`.
#[derive(Clone, Debug, Args)]
pub struct DnsRuleArgs {
    /// The cluster's DNS domain, for the Service's name.
    #[arg(long, default_value = "cluster.local")]
    pub cluster_domain: String,
    /// Hosts that keep resolving the public way (to the load balancer): `shop.example.com` or
    /// `*.example.com` (one label); repeatable.
    #[arg(long = "dns-exclude", value_name = "PATTERN")]
    pub dns_exclude: Vec<crate::dns::DnsExclude>,
}

impl DnsRuleArgs {
    /// `NAME.NAMESPACE.svc.DOMAIN` of a Service.
    pub fn service_fqdn(&self, (namespace, name): &(String, String)) -> String {
        format!("{name}.{namespace}.svc.{}", self.cluster_domain.trim_end_matches('.'))
    }
}

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
    /// With --publish-service: write `NAME.NAMESPACE.svc.cluster.local` instead of its ClusterIP.
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
    /// Where status addresses come from, if anywhere.
    pub fn publish_address(&self) -> Option<crate::status::PublishAddress> {
        use crate::status::PublishAddress;
        if let Some((namespace, name)) = self.publish_service.clone() {
            return Some(if self.publish_hostname {
                PublishAddress::ServiceHostname { namespace, name }
            } else {
                PublishAddress::ServiceIp { namespace, name }
            });
        }
        (!self.publish_status_address.is_empty()).then(|| PublishAddress::Fixed(self.publish_status_address.clone()))
    }
}

fn parse_namespaced(s: &str) -> Result<(String, String), String> {
    match s.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((namespace.to_string(), name.to_string()))
        }
        _ => Err(format!("expected NAMESPACE/NAME, got {s:?}")),
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Manifest file or directory (YAML or JSON, as `kubectl get -o yaml` writes them); repeatable.
    #[arg(long = "manifests", short = 'f', required = true, value_name = "PATH")]
    pub manifests: Vec<PathBuf>,
    /// How often manifest files are checked for changes.
    #[arg(long, default_value = "250ms", value_parser = parse_duration)]
    pub poll_interval: Duration,
    #[command(flatten)]
    pub proxy: ProxyArgs,
    #[command(flatten)]
    pub classes: ClassArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Serve these manifests instead of the bundled ones (try `examples/demo` and edit it live).
    #[arg(long = "manifests", value_name = "PATH")]
    pub manifests: Vec<PathBuf>,
    /// Only start the example backends.
    #[arg(long)]
    pub backends_only: bool,
    #[command(flatten)]
    pub proxy: ProxyArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

#[derive(Clone, Debug, Args)]
pub struct ProxyArgs {
    /// Plain HTTP listener (HTTP/1.1 and h2c).
    #[arg(long, default_value = "0.0.0.0:8080", env = "SHUNT_HTTP_ADDR")]
    pub http_addr: SocketAddr,
    /// HTTPS listener: TLS 1.2/1.3, certificate by SNI, HTTP/2 or HTTP/1.1 by ALPN.
    #[arg(long, default_value = "0.0.0.0:8443", env = "SHUNT_HTTPS_ADDR")]
    pub https_addr: SocketAddr,
    /// PEM CA bundle: HTTPS backends must present a chain to one of these. Without it, backend
    /// TLS is encrypted but unauthenticated (pod IPs are never in a certificate's names).
    #[arg(long, value_name = "FILE")]
    pub upstream_ca_bundle: Option<PathBuf>,
    /// Admin listener: /healthz, /readyz, /metrics, /routes.
    #[arg(long, default_value = "0.0.0.0:9090", env = "SHUNT_ADMIN_ADDR")]
    pub admin_addr: SocketAddr,
    /// Peers whose X-Forwarded-* headers are kept (CIDRs or addresses, comma-separated).
    #[arg(long, default_value = "", value_parser = parse_trusted)]
    pub trusted_proxies: TrustedProxies,
    /// Time allowed for a backend's response head.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub upstream_timeout: Duration,
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub connect_timeout: Duration,
    /// Idle pooled connections are closed after this; keep it below your backends' keep-alive timeouts.
    #[arg(long, default_value = "4s", value_parser = parse_duration)]
    pub upstream_idle_timeout: Duration,
    /// HTTP/1 connections per backend endpoint per worker thread; a request beyond it waits for
    /// a free one up to --connect-timeout, then gets 503.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub upstream_max_connections: u32,
    /// Endpoints one request may try when connecting fails.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..))]
    pub connect_attempts: u16,
    /// Request bodies larger than this get 413 (e.g. 10Mi). Unlimited when unset.
    #[arg(long, value_parser = parse_size)]
    pub max_body_size: Option<u64>,
    /// Request heads larger than this get 431.
    #[arg(long, default_value = "32Ki", value_parser = parse_size)]
    pub max_header_size: u64,
    /// On SIGTERM, how long in-flight requests may take to finish.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub drain_timeout: Duration,
    /// One log line per request (target `shunt::access`).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub access_log: bool,
    /// Proxy worker threads, each serving its own connections; defaults to the available cores.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

#[derive(Clone, Debug, Args)]
pub struct ClassArgs {
    /// IngressClasses with this `spec.controller` are ours.
    #[arg(long, default_value = "shunt.dev/ingress-controller")]
    pub controller_name: String,
    /// Class names that are ours even without an IngressClass object; repeatable.
    #[arg(long = "ingress-class", default_value = "shunt")]
    pub ingress_classes: Vec<String>,
    /// Also serve Ingresses that name no class.
    #[arg(long)]
    pub watch_ingress_without_class: bool,
    /// Also serve Ingresses of this other class (e.g. the cloud load balancer's); repeatable.
    #[arg(long = "shadow-class")]
    pub shadow_classes: Vec<String>,
    /// `kubernetes.io/tls` Secret (NAMESPACE/NAME) for SNI names no Ingress covers and clients
    /// without SNI; a self-signed certificate for `shunt-default.invalid` otherwise.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub default_ssl_certificate: Option<(String, String)>,
}

#[derive(Clone, Debug, Args)]
pub struct LogArgs {
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "SHUNT_LOG_FORMAT")]
    pub log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

// === impl ProxyArgs ===

impl ProxyArgs {
    pub fn proxy_options(&self) -> ProxyOptions {
        ProxyOptions {
            trusted_proxies: self.trusted_proxies.clone(),
            upstream_timeout: self.upstream_timeout,
            max_body_size: self.max_body_size,
            connect_attempts: usize::from(self.connect_attempts),
            access_log: self.access_log,
        }
    }

    /// Fails when the CA bundle cannot be read or holds no certificate.
    pub fn client_options(&self) -> anyhow::Result<ClientOptions> {
        use anyhow::Context as _;
        let roots = match &self.upstream_ca_bundle {
            Some(path) => {
                let pem =
                    std::fs::read(path).with_context(|| format!("reading --upstream-ca-bundle {}", path.display()))?;
                tls::roots_from_pem(&pem).with_context(|| format!("--upstream-ca-bundle {}", path.display()))?
            }
            None => tls::RootCertStore::empty(),
        };
        Ok(ClientOptions {
            connect_timeout: self.connect_timeout,
            pool_idle_timeout: self.upstream_idle_timeout,
            max_connections_per_endpoint: usize::try_from(self.upstream_max_connections).unwrap_or(usize::MAX),
            tls: tls::client_config(roots),
        })
    }

    /// How many proxy workers to run: `--threads`, else one per available core.
    pub fn workers(&self) -> usize {
        match self.threads {
            Some(threads) => usize::from(threads),
            None => std::thread::available_parallelism().map_or(1, usize::from),
        }
    }

    pub fn server_options(&self) -> ServerOptions {
        ServerOptions {
            max_header_size: usize::try_from(self.max_header_size).unwrap_or(usize::MAX),
            drain_timeout: self.drain_timeout,
            ..ServerOptions::default()
        }
    }
}

impl ClassArgs {
    pub fn compile_options(&self) -> CompileOptions {
        CompileOptions {
            controller_name: self.controller_name.clone(),
            ingress_classes: self.ingress_classes.clone(),
            watch_ingress_without_class: self.watch_ingress_without_class,
            shadow_classes: self.shadow_classes.clone(),
            default_certificate: self.default_ssl_certificate.clone(),
            now: None,
        }
    }
}

fn parse_trusted(s: &str) -> Result<TrustedProxies, String> {
    s.parse()
        .map_err(|error| format!("{error} (expected CIDRs like 10.0.0.0/8,192.168.1.1)"))
}

/// `250ms`, `30s`, `5m`, `1h`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {s:?} (expected e.g. 250ms, 30s, 5m)"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("invalid duration unit in {s:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|error| format!("invalid duration {s:?}: {error}"))
}

/// Bytes with an optional `K`/`Ki`/`M`/`Mi`/`G`/`Gi` suffix (as Kubernetes quantities spell them).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| format!("invalid size {s:?} (expected e.g. 512Ki, 10Mi)"))?;
    let multiplier: u64 = match unit.trim_end_matches(['b', 'B']) {
        "" => 1,
        "K" | "k" => 1_000,
        "Ki" => 1 << 10,
        "M" => 1_000_000,
        "Mi" => 1 << 20,
        "G" => 1_000_000_000,
        "Gi" => 1 << 30,
        _ => return Err(format!("invalid size unit in {s:?} (use K, Ki, M, Mi, G or Gi)")),
    };
    value
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size {s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_parse_with_units() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("5 fortnights").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(parse_size("10Mi"), Ok(10 << 20));
        assert_eq!(parse_size("32Ki"), Ok(32 << 10));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("1Ti").is_err());
        assert!(parse_size("99999999999Gi").is_err());
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
