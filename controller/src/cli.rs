//! Command-line arguments, shared by every subcommand that serves traffic.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};
use shunt_proxy::{headers::TrustedProxies, proxy::ProxyOptions, server::ServerOptions, tls, upstream::ClientOptions};

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
    /// The cluster's DNS domain, for the Service's name; never rewritten.
    #[arg(long, default_value = "cluster.local", value_parser = crate::dns::parse_cluster_domain)]
    pub cluster_domain: String,
    /// Hosts that keep resolving the public way (to the load balancer): `shop.example.com` or
    /// `*.example.com` (one label); repeatable.
    #[arg(long = "dns-exclude", value_name = "PATTERN")]
    pub dns_exclude: Vec<crate::dns::DnsExclude>,
    /// Only hosts at or under these domains are rewritten (repeatable); recommended on clusters
    /// where many teams create Ingresses.
    #[arg(long = "dns-domain", value_name = "SUFFIX")]
    pub dns_domains: Vec<crate::dns::DnsDomain>,
    /// The identity on this release's CoreDNS block and key (NAMESPACE/NAME); --publish-service by default.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub release: Option<crate::dns::Release>,
    /// `refused`: shadowed hosts whose load-balancer answer shunt cannot reproduce keep
    /// resolving to it (listed as comments); `all`: rewrite them too.
    #[arg(long, value_enum, default_value_t = ShadowRewrite::Refused)]
    pub shadow_rewrite: ShadowRewrite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShadowRewrite {
    Refused,
    All,
}

impl DnsRuleArgs {
    /// Shadowed hosts to leave out of the rules, with why (none with `--shadow-rewrite=all`).
    pub fn shadow_refusals(&self, verdicts: &[crate::compile::HostVerdict]) -> Vec<crate::dns::Refusal> {
        crate::compile::qcloud::dns_refusals(verdicts, self.shadow_rewrite == ShadowRewrite::All)
            .into_iter()
            .map(|(host, detail)| crate::dns::Refusal {
                host,
                reason: crate::dns::RefusalReason::Other {
                    code: "ShadowRefused",
                    detail,
                },
            })
            .collect()
    }

    /// `NAME.NAMESPACE.svc.DOMAIN` of a Service.
    pub fn service_fqdn(&self, (namespace, name): &(String, String)) -> String {
        format!("{name}.{namespace}.svc.{}", self.cluster_domain.trim_end_matches('.'))
    }

    pub fn policy(&self) -> crate::dns::DnsPolicy {
        crate::dns::DnsPolicy::new(&self.cluster_domain, self.dns_domains.clone(), self.dns_exclude.clone())
    }

    /// `--release`, else the Service's `NAMESPACE/NAME`.
    pub fn release(&self, (namespace, name): &(String, String)) -> Result<crate::dns::Release, String> {
        match &self.release {
            Some(release) => Ok(release.clone()),
            None => crate::dns::Release::new(namespace, name),
        }
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

/// Leader election timing, as client-go's leaderelection has it.
#[derive(Clone, Debug, Args)]
pub struct ElectionArgs {
    /// How long followers wait, after the Lease last changed, before taking it over.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// The leader stops leading when it has not renewed for this long (counted from the start of
    /// its last successful renewal); shorter than --lease-duration.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub renew_deadline: Duration,
    /// Time between election rounds.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub retry_period: Duration,
    /// Tests only: shifts the wall clock used for the times written into the Lease (e.g. `60s`,
    /// `-60s`), to play replicas whose clocks disagree.
    #[arg(long, hide = true, default_value = "0s", allow_hyphen_values = true, value_parser = parse_signed_duration)]
    pub lease_clock_offset: k8s_openapi::jiff::SignedDuration,
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
    /// A latency histogram per route in /metrics (about 20 series per route that served);
    /// per-backend latency is always there.
    #[arg(long)]
    pub metrics_per_route_latency: bool,
    /// Proxy worker threads, each serving its own connections; defaults to the available cores.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// From accept (or the TLS handshake's end) to a complete first request head, and from the
    /// first byte of each later HTTP/1.1 head to its end; then the connection is closed (408
    /// where a request line started). Bounds HTTP/1.1-or-HTTP/2 detection too.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub client_header_timeout: Duration,
    /// A keep-alive connection with no request in flight for this long is closed (HTTP/2: GOAWAY).
    #[arg(long, default_value = "75s", value_parser = parse_duration)]
    pub client_idle_timeout: Duration,
    /// Longest wait between two reads of a request body; then 408 and the backend request ends.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub client_body_timeout: Duration,
    /// An upgraded connection (WebSocket) with no bytes either way for this long is closed.
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    pub tunnel_idle_timeout: Duration,
    /// Open client connections per process (all listeners and threads); more are closed at
    /// accept. Keep it below the pod's file-descriptor limit (`ulimit -n`) minus upstream sockets.
    #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Streams one HTTP/2 client connection may have open at once.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..))]
    pub http2_max_concurrent_streams: u32,
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
    /// `NAME=qcloud` compiles them as TKE's CLB serves them (class `qcloud` does by default).
    #[arg(long = "shadow-class", value_name = "NAME[=PROFILE]")]
    pub shadow_classes: Vec<crate::compile::ShadowClass>,
    /// A `kubernetes.io/tls` Secret serving a shadowed qcloud host's HTTPS (the host as the
    /// Ingress writes it); repeatable.
    #[arg(long = "shadow-tls", value_parser = parse_shadow_tls, value_name = "HOST=NAMESPACE/NAME")]
    pub shadow_tls: Vec<(String, (String, String))>,
    /// The redirect code of qcloud `auto-rewrite` when `auto-rewrite-code` gives none (TKE does
    /// not document it precisely).
    #[arg(long, default_value_t = 302, value_parser = parse_rewrite_code)]
    pub shadow_rewrite_code: u16,
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
    pub fn metrics_options(&self) -> shunt_proxy::metrics::MetricsOptions {
        shunt_proxy::metrics::MetricsOptions {
            per_route_latency: self.metrics_per_route_latency,
        }
    }

    pub fn proxy_options(&self) -> ProxyOptions {
        ProxyOptions {
            trusted_proxies: self.trusted_proxies.clone(),
            upstream_timeout: self.upstream_timeout,
            max_body_size: self.max_body_size,
            connect_attempts: usize::from(self.connect_attempts),
            access_log: self.access_log,
            client_body_timeout: self.client_body_timeout,
            ..ProxyOptions::default()
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
            header_timeout: self.client_header_timeout,
            idle_timeout: self.client_idle_timeout,
            max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
            http2_max_concurrent_streams: self.http2_max_concurrent_streams,
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
            shadow: crate::compile::ShadowOptions {
                default_rewrite_code: self.shadow_rewrite_code,
                tls: self.shadow_tls.iter().cloned().collect(),
            },
            default_certificate: self.default_ssl_certificate.clone(),
            now: None,
        }
    }
}

fn parse_shadow_tls(s: &str) -> Result<(String, (String, String)), String> {
    let (host, secret) = s
        .split_once('=')
        .ok_or_else(|| format!("expected HOST=NAMESPACE/NAME, got {s:?}"))?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("{s:?}: empty or malformed host"));
    }
    Ok((
        host.trim_end_matches('.').to_ascii_lowercase(),
        parse_namespaced(secret)?,
    ))
}

fn parse_rewrite_code(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(code @ (301 | 302 | 307)) => Ok(code),
        _ => Err(format!("{s:?}: the CLB redirects with 301, 302 or 307")),
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

/// A duration as [`parse_duration`] reads it, optionally negative (`-60s`).
fn parse_signed_duration(s: &str) -> Result<k8s_openapi::jiff::SignedDuration, String> {
    let (negative, magnitude) = match s.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let duration = k8s_openapi::jiff::SignedDuration::try_from(parse_duration(magnitude)?)
        .map_err(|error| format!("invalid duration {s:?}: {error}"))?;
    Ok(if negative { -duration } else { duration })
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

    fn mk_run_args(args: &[&str]) -> RunArgs {
        let argv = ["shunt", "run"].iter().chain(args);
        match Cli::try_parse_from(argv).expect("valid arguments").command {
            Command::Run(args) => args,
            other => panic!("not run: {other:?}"),
        }
    }

    #[test]
    fn the_published_hostname_follows_the_cluster_domain() {
        use crate::status::PublishAddress;
        let hostname = |args: &[&str]| mk_run_args(args).publish_address();
        let service = ["--publish-service", "edge/shunt", "--publish-hostname"];
        assert_eq!(
            hostname(&service),
            Some(PublishAddress::ServiceHostname {
                hostname: "shunt.edge.svc.cluster.local".to_string()
            })
        );
        let custom = [&service[..], &["--cluster-domain", "corp.example."]].concat();
        assert_eq!(
            hostname(&custom),
            Some(PublishAddress::ServiceHostname {
                hostname: "shunt.edge.svc.corp.example".to_string()
            })
        );
    }

    #[test]
    fn election_timings_default_to_client_go_and_the_clock_offset_may_be_negative() {
        let args = mk_run_args(&[]).election;
        assert_eq!(
            (args.lease_duration, args.renew_deadline, args.retry_period),
            (Duration::from_secs(15), Duration::from_secs(10), Duration::from_secs(2))
        );
        let args = mk_run_args(&["--lease-clock-offset", "-60s"]).election;
        assert_eq!(
            args.lease_clock_offset,
            k8s_openapi::jiff::SignedDuration::from_secs(-60)
        );
        assert!(Cli::try_parse_from(["shunt", "run", "--lease-clock-offset", "soon"]).is_err());
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
