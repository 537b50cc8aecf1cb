//! The one set of defaults: the proxy's option types take them for `Default`, the command
//! line for its flags (`default_value_t`), and profiles compare annotations against them.

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    time::Duration,
};

const fn any_ipv4(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
}

// === listeners ===

/// Plain HTTP (HTTP/1.1 and h2c).
pub const HTTP_ADDR: SocketAddr = any_ipv4(8080);
/// HTTPS (HTTP/1.1 or HTTP/2 by ALPN).
pub const HTTPS_ADDR: SocketAddr = any_ipv4(8443);
/// /healthz, /readyz, /metrics, /routes.
pub const ADMIN_ADDR: SocketAddr = any_ipv4(9090);

// === upstreams ===

/// Time allowed for a pod's response head (nginx's `proxy_read_timeout`).
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);
/// Connecting to a pod, TLS included, and waiting for a free pooled connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Idle pooled connections are closed after this, below common backends' keep-alive timeouts.
pub const UPSTREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(4);
/// HTTP/1 connections per endpoint per worker.
pub const UPSTREAM_MAX_CONNECTIONS: u32 = 256;
/// Endpoints one request may try when connecting fails.
pub const CONNECT_ATTEMPTS: u16 = 3;
/// Extra tries of an idempotent request after a reset or a timeout.
pub const RETRIES: u16 = 2;
/// Retries per request over the last second an upstream may send.
pub const RETRY_BUDGET_RATIO: f64 = 0.2;
/// Retries per second an upstream may send whatever its request rate.
pub const RETRY_BUDGET_MIN: u32 = 10;
/// Failed tries in a row that eject an endpoint; 0 turns ejection off.
pub const EJECT_AFTER: u32 = 5;
/// A first ejection's length.
pub const EJECT_TIME: Duration = Duration::from_secs(10);
/// The largest share of an upstream's endpoints ejected at once, in percent.
pub const EJECT_MAX_PERCENT: u8 = 50;
/// A new endpoint's share grows over this window; zero: full share at once.
pub const SLOW_START: Duration = Duration::ZERO;

// === clients ===

/// Request heads larger than this get 431.
pub const MAX_HEADER_SIZE: u64 = 32 * 1024;
/// On shutdown, how long in-flight requests may take to finish.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// A client that has not finished its TLS handshake by then is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// From accept to a complete first request head, and for each later HTTP/1.1 head.
pub const CLIENT_HEADER_TIMEOUT: Duration = Duration::from_secs(60);
/// A keep-alive connection with no request in flight for this long is closed.
pub const CLIENT_IDLE_TIMEOUT: Duration = Duration::from_secs(75);
/// Longest wait between two reads of a request body.
pub const CLIENT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// Bounds each of connecting to an external auth service and waiting for its answer
/// (`--external-auth-timeout`): nginx's proxy timeouts, which the auth location keeps at their default.
pub const EXTERNAL_AUTH_TIMEOUT: Duration = Duration::from_secs(60);
/// An upgraded connection with no bytes either way for this long is closed.
pub const TUNNEL_IDLE_TIMEOUT: Duration = Duration::from_secs(3600);
/// Open client connections per process.
pub const MAX_CONNECTIONS: u32 = 16384;
/// Streams one HTTP/2 client connection may have open at once.
pub const HTTP2_MAX_CONCURRENT_STREAMS: u32 = 128;
/// HTTP/2 PING interval.
pub const HTTP2_KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(30);
/// A peer that does not answer a PING within this is dropped.
pub const HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);
/// One log line per request.
pub const ACCESS_LOG: bool = true;

// === profiles ===

/// The redirect code of qcloud `auto-rewrite` when `auto-rewrite-code` gives none.
pub const QCLOUD_AUTO_REWRITE_CODE: u16 = 302;
