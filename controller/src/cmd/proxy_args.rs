//! The proxy's listeners, limits and timeouts, and the proxy crate's options built from them.
//! Every default comes from `shunt_spec::defaults`, as the `Default` of the option it sets does
//! (a unit test holds them together).

use std::{net::SocketAddr, path::PathBuf};

use clap::Args;

use crate::compile::CompileOptions;
use shunt_proxy::dataplane::{
    self as tls, AllowedUpgrades, ClientOptions, MetricsOptions, ProxyOptions, ServerOptions,
};
use shunt_spec::{BudgetOptions, OutlierOptions, RetryPolicy, Topology, TrustedProxies, defaults};

use super::parse::{Span, parse_size, parse_trusted, percent, positive};

#[derive(Clone, Debug, Args)]
pub struct ProxyArgs {
    /// Plain HTTP listener (HTTP/1.1 and h2c).
    #[arg(long, default_value_t = defaults::HTTP_ADDR, env = "SHUNT_HTTP_ADDR")]
    pub http_addr: SocketAddr,
    /// HTTPS listener: TLS 1.2/1.3, certificate by SNI, HTTP/2 or HTTP/1.1 by ALPN.
    #[arg(long, default_value_t = defaults::HTTPS_ADDR, env = "SHUNT_HTTPS_ADDR")]
    pub https_addr: SocketAddr,
    /// `PORT=ADDR`, repeatable: Gateway listeners on PORT (neither 80 nor 443) are served on
    /// ADDR, plain HTTP; without it such a listener is not accepted (`PortUnavailable`).
    #[arg(long, value_name = "PORT=ADDR", value_parser = super::gateway_port::parse_gateway_port)]
    pub gateway_port: Vec<(u16, SocketAddr)>,
    /// PEM CA bundle: HTTPS backends must present a chain to one of these. Without it, backend
    /// TLS is encrypted but unauthenticated (pod IPs are never in a certificate's names).
    #[arg(long, value_name = "FILE")]
    pub upstream_ca_bundle: Option<PathBuf>,
    /// Admin listener: /healthz, /readyz, /metrics, /routes.
    #[arg(long, default_value_t = defaults::ADMIN_ADDR, env = "SHUNT_ADMIN_ADDR")]
    pub admin_addr: SocketAddr,
    /// Peers whose X-Forwarded-* headers are kept (CIDRs or addresses, comma-separated).
    #[arg(long, default_value = "", value_parser = parse_trusted)]
    pub trusted_proxies: TrustedProxies,
    /// Time allowed for a backend's response head.
    #[arg(long, default_value_t = Span(defaults::UPSTREAM_TIMEOUT))]
    pub upstream_timeout: Span,
    #[arg(long, default_value_t = Span(defaults::CONNECT_TIMEOUT))]
    pub connect_timeout: Span,
    /// Idle pooled connections are closed after this; keep it below your backends' keep-alive timeouts.
    #[arg(long, default_value_t = Span(defaults::UPSTREAM_IDLE_TIMEOUT))]
    pub upstream_idle_timeout: Span,
    /// HTTP/1 connections per backend endpoint per worker thread; a request beyond it waits for
    /// a free one up to --connect-timeout, then gets 503.
    #[arg(long, default_value_t = defaults::UPSTREAM_MAX_CONNECTIONS, value_parser = positive::<u32>())]
    pub upstream_max_connections: u32,
    /// Endpoints one request may try when connecting fails.
    #[arg(long, default_value_t = defaults::CONNECT_ATTEMPTS, value_parser = positive::<u16>())]
    pub connect_attempts: u16,
    /// Extra tries of an idempotent request (GET, HEAD, OPTIONS, TRACE, PUT, DELETE, or with an
    /// Idempotency-Key) on another endpoint after a reset or a timeout before any response byte.
    #[arg(long, default_value_t = defaults::RETRIES)]
    pub retries: u16,
    /// Retries per backend allowed as a share of its requests over the last second.
    #[arg(long, default_value_t = defaults::RETRY_BUDGET_RATIO)]
    pub retry_budget_ratio: f64,
    /// Retries per backend and second allowed whatever its request rate.
    #[arg(long, default_value_t = defaults::RETRY_BUDGET_MIN)]
    pub retry_budget_min: u32,
    /// Failed tries in a row (connect failures, resets, timeouts) that eject an endpoint from the
    /// choice; 0 turns ejection off.
    #[arg(long, default_value_t = defaults::EJECT_AFTER)]
    pub eject_after: u32,
    /// Count 5xx answers as failed tries for ejection.
    #[arg(long)]
    pub eject_5xx: bool,
    /// How long a first ejection lasts; the n-th lasts n times as long (at most 10 times).
    #[arg(long, default_value_t = Span(defaults::EJECT_TIME))]
    pub eject_time: Span,
    /// The largest share of a backend's endpoints ejected at once, in percent.
    #[arg(long, default_value_t = defaults::EJECT_MAX_PERCENT, value_parser = percent())]
    pub eject_max_percent: u8,
    /// A new endpoint's share of requests grows over this window (0s: full share at once).
    #[arg(long, default_value_t = Span(defaults::SLOW_START))]
    pub slow_start: Span,
    /// The node this proxy runs on (the chart sets it from the downward API): endpoints hinted
    /// `forNodes` this node are preferred.
    #[arg(long, env = "SHUNT_NODE_NAME")]
    pub node_name: Option<String>,
    /// The zone this proxy runs in: endpoints hinted `forZones` this zone are preferred. `shunt run`
    /// reads it from its Node's `topology.kubernetes.io/zone` label when unset.
    #[arg(long, env = "SHUNT_ZONE")]
    pub zone: Option<String>,
    /// Request bodies larger than this get 413 (e.g. 10Mi). Unlimited when unset.
    #[arg(long, value_parser = parse_size)]
    pub max_body_size: Option<u64>,
    /// Request heads larger than this get 431.
    #[arg(long, default_value_t = defaults::MAX_HEADER_SIZE, value_parser = parse_size)]
    pub max_header_size: u64,
    /// On SIGTERM, how long in-flight requests may take to finish.
    #[arg(long, default_value_t = Span(defaults::DRAIN_TIMEOUT))]
    pub drain_timeout: Span,
    /// One log line per request (target `shunt::access`).
    #[arg(long, default_value_t = defaults::ACCESS_LOG, action = clap::ArgAction::Set)]
    pub access_log: bool,
    /// A latency histogram per route in /metrics (about 20 series per route that served);
    /// per-backend latency is always there.
    #[arg(long)]
    pub metrics_per_route_latency: bool,
    /// Proxy worker threads, each serving its own connections; defaults to the available cores.
    #[arg(long, value_parser = positive::<u16>())]
    pub threads: Option<u16>,
    /// From accept (or the TLS handshake's end) to a complete first request head, and from the
    /// first byte of each later HTTP/1.1 head to its end; then the connection is closed (408
    /// where a request line started). Bounds HTTP/1.1-or-HTTP/2 detection too.
    #[arg(long, default_value_t = Span(defaults::CLIENT_HEADER_TIMEOUT))]
    pub client_header_timeout: Span,
    /// A keep-alive connection with no request in flight for this long is closed (HTTP/2: GOAWAY).
    #[arg(long, default_value_t = Span(defaults::CLIENT_IDLE_TIMEOUT))]
    pub client_idle_timeout: Span,
    /// Longest wait between two reads of a request body; then 408 and the backend request ends.
    #[arg(long, default_value_t = Span(defaults::CLIENT_BODY_TIMEOUT))]
    pub client_body_timeout: Span,
    /// Bounds each of connecting to an external auth service (nginx profile `auth-url`) and
    /// waiting for its answer; then the request gets 500. nginx's own is 60 s each.
    #[arg(long, default_value_t = Span(defaults::EXTERNAL_AUTH_TIMEOUT))]
    pub external_auth_timeout: Span,
    /// An upgraded connection (WebSocket) with no bytes either way for this long is closed.
    #[arg(long, default_value_t = Span(defaults::TUNNEL_IDLE_TIMEOUT))]
    pub tunnel_idle_timeout: Span,
    /// Open client connections per process (all listeners and threads); more are closed at
    /// accept. Keep it below the pod's file-descriptor limit (`ulimit -n`) minus upstream sockets.
    #[arg(long, default_value_t = defaults::MAX_CONNECTIONS, value_parser = positive::<u32>())]
    pub max_connections: u32,
    /// Streams one HTTP/2 client connection may have open at once.
    #[arg(long, default_value_t = defaults::HTTP2_MAX_CONCURRENT_STREAMS, value_parser = positive::<u32>())]
    pub http2_max_concurrent_streams: u32,
    /// Also forward this upgrade protocol (repeatable); only `websocket` is forwarded otherwise,
    /// and any other `Upgrade` (such as `h2c`) is removed so the pod answers the request itself.
    #[arg(long = "allow-upgrade", value_name = "TOKEN")]
    pub allow_upgrade: Vec<String>,
    /// Forward request fields whose names hold `_`; by default they are dropped (and counted in
    /// shunt_request_fields_dropped_total), as nginx's `underscores_in_headers off`.
    #[arg(long)]
    pub allow_underscores_in_headers: bool,
}

impl ProxyArgs {
    /// `--gateway-port`, checked as a whole.
    pub fn gateway_ports(&self) -> anyhow::Result<Vec<(u16, SocketAddr)>> {
        super::gateway_port::check(&self.gateway_port).map_err(anyhow::Error::msg)?;
        Ok(self.gateway_port.clone())
    }

    /// `options` with the Gateway listener ports `--gateway-port` serves.
    pub fn with_gateway_ports(&self, options: CompileOptions) -> anyhow::Result<CompileOptions> {
        let gateway_ports = self.gateway_ports()?.into_iter().map(|(port, _)| port).collect();
        Ok(CompileOptions {
            gateway_ports,
            ..options
        })
    }

    pub fn metrics_options(&self) -> MetricsOptions {
        MetricsOptions {
            per_route_latency: self.metrics_per_route_latency,
        }
    }

    pub fn proxy_options(&self) -> ProxyOptions {
        ProxyOptions {
            trusted_proxies: self.trusted_proxies.clone(),
            upstream_timeout: self.upstream_timeout.0,
            max_body_size: self.max_body_size,
            connect_attempts: usize::from(self.connect_attempts),
            access_log: self.access_log,
            client_body_timeout: self.client_body_timeout.0,
            external_auth_timeout: self.external_auth_timeout.0,
            allowed_upgrades: AllowedUpgrades::new(&self.allow_upgrade),
            underscores_in_headers: self.allow_underscores_in_headers,
            retry: self.retry_policy(),
            slow_start: (!self.slow_start.0.is_zero()).then_some(self.slow_start.0),
            ..ProxyOptions::default()
        }
    }

    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            retries: usize::from(self.retries),
            budget: BudgetOptions {
                ratio: self.retry_budget_ratio,
                min_per_second: self.retry_budget_min,
            },
            outlier: OutlierOptions {
                consecutive_failures: self.eject_after,
                count_5xx: self.eject_5xx,
                base_ejection: self.eject_time.0,
                max_ejected_percent: self.eject_max_percent,
            },
        }
    }

    /// This proxy's node and zone from the flags (`shunt run` may fill in the zone).
    pub fn topology(&self) -> Topology {
        Topology {
            node: self.node_name.clone().filter(|name| !name.is_empty()),
            zone: self.zone.clone().filter(|zone| !zone.is_empty()),
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
            connect_timeout: self.connect_timeout.0,
            pool_idle_timeout: self.upstream_idle_timeout.0,
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
            drain_timeout: self.drain_timeout.0,
            header_timeout: self.client_header_timeout.0,
            idle_timeout: self.client_idle_timeout.0,
            max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
            http2_max_concurrent_streams: self.http2_max_concurrent_streams,
            ..ServerOptions::default()
        }
    }
}
