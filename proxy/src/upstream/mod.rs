//! Backends: a set of pod endpoints with load counters, how to pick one, and the worker's
//! connections to them.

pub mod auth;
mod balance;
mod body;
pub mod budget;
mod chain;
mod client;
mod clock;
mod connect;
pub mod h1;
mod h2;
pub mod health;
pub mod locality;
mod outgoing;
mod pod_tls;
pub mod pool;
mod read_idle;

use std::{
    fmt,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};

pub use self::pod_tls::PodTls;
pub use self::{
    balance::{
        EndpointGuard,
        affinity::Sticky,
        canary::Canary,
        route::{Choice, RouteBalance},
        vars::RequestVars,
    },
    body::UpstreamBody,
    budget::RetryBudget,
    chain::{chain_has, is_going_away},
    client::{ClientOptions, Lease, UpstreamClients},
    health::Health,
    locality::classify,
    outgoing::Outgoing,
};
pub use crate::spec::Locality;
use crate::{metrics::UpstreamStats, spec::UpstreamProtocol};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why sending to a pod failed: before a connection existed, or after.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// Nothing was sent: the request (and its body) can go to another endpoint.
    #[error("connect: {0}")]
    Connect(#[source] BoxError),
    /// The endpoint was at `--upstream-max-connections` and none came free in time.
    #[error("waiting for a connection: {0}")]
    PoolTimeout(#[source] pool::WaitTimeout),
    #[error("{0}")]
    Request(#[source] BoxError),
    /// No response head within `--upstream-timeout`.
    #[error("no response within {0:?}")]
    Timeout(Duration),
}

impl UpstreamError {
    pub fn is_connect(&self) -> bool {
        matches!(self, UpstreamError::Connect(_))
    }

    pub(crate) fn connect_timeout() -> Self {
        UpstreamError::Connect(std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out").into())
    }
}

/// One backend (`namespace/service:port`) and the endpoints it currently routes to.
pub struct Upstream {
    pub id: Arc<str>,
    pub protocol: UpstreamProtocol,
    /// Shared with later tables while the pod stays, so in-flight counts survive a publish.
    pub endpoints: Box<[Arc<Endpoint>]>,
    pub stats: UpstreamStats,
    /// Indexes of the endpoints whose hints name this proxy's node (or else its zone); the
    /// choice prefers them. Empty: no preference.
    pub preferred: Box<[usize]>,
    /// Where each endpoint is from this proxy, by index; empty when nothing is known (`other`).
    pub locality: Box<[Locality]>,
    /// Retries this upstream may still send this second.
    pub budget: RetryBudget,
    /// Set once no endpoint is within its slow-start window (then `pick` skips the check).
    settled: AtomicBool,
    /// The backend's own TLS client (`Https` backends with an [`crate::spec::UpstreamTls`]);
    /// `None` for every other backend.
    pub tls: Option<Arc<PodTls>>,
}

/// A pod address and the requests it is serving right now. 64 bytes: a table holds one per
/// pod (50,000 at 10,000 Services), and nothing of it is allocated apart.
pub struct Endpoint {
    pub addr: SocketAddr,
    /// Failures and ejection (passive health), shared by every worker.
    pub health: Health,
    /// When this proxy first routed to it, in [`clock::nanos`]: its slow-start window counts
    /// from here.
    since: i64,
    in_flight: AtomicU32,
    /// Past its slow-start window; then its weight is no longer read.
    warm: AtomicBool,
}

// === impl Upstream ===

impl Upstream {
    pub fn new(id: &str, protocol: UpstreamProtocol, endpoints: Vec<Arc<Endpoint>>, stats: UpstreamStats) -> Self {
        Upstream {
            id: id.into(),
            protocol,
            endpoints: endpoints.into_boxed_slice(),
            stats,
            preferred: Box::default(),
            locality: Box::default(),
            budget: RetryBudget::default(),
            settled: AtomicBool::new(false),
            tls: None,
        }
    }

    /// Speaks TLS to the pods through `tls` instead of the plain HTTPS client.
    pub fn with_tls(mut self, tls: Option<Arc<PodTls>>) -> Self {
        self.tls = tls;
        self
    }

    /// Sets which endpoints are preferred and where each is, from their topology and this
    /// proxy's (see [`Topology::classify`]).
    pub fn with_topology(mut self, preferred: Vec<usize>, locality: Vec<Locality>) -> Self {
        self.preferred = preferred.into_boxed_slice();
        self.locality = locality.into_boxed_slice();
        self
    }

    /// Where endpoint `index` is from this proxy.
    pub fn locality_of(&self, index: usize) -> Locality {
        self.locality.get(index).copied().unwrap_or(Locality::Other)
    }
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addrs: Vec<_> = self.endpoints.iter().map(|e| e.addr).collect();
        f.debug_struct("Upstream")
            .field("id", &self.id)
            .field("protocol", &self.protocol)
            .field("endpoints", &addrs)
            .finish()
    }
}

// === impl Endpoint ===

impl Endpoint {
    pub fn new(addr: SocketAddr) -> Self {
        Endpoint {
            addr,
            health: Health::default(),
            since: clock::nanos(Instant::now()),
            in_flight: AtomicU32::new(0),
            warm: AtomicBool::new(false),
        }
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// How long since this proxy first routed to it, at `now`; zero before that.
    fn age(&self, now: Instant) -> Duration {
        Duration::from_nanos(u64::try_from(clock::nanos(now).saturating_sub(self.since)).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_one_cache_line() {
        assert!(size_of::<Endpoint>() <= 64, "{} bytes", size_of::<Endpoint>());
    }

    #[test]
    fn an_endpoint_ages_from_its_creation() {
        let endpoint = Endpoint::new(([127, 0, 0, 1], 80).into());
        let created = Instant::now();
        assert!(endpoint.age(created + Duration::from_secs(3)) >= Duration::from_secs(3));
        assert!(endpoint.age(created + Duration::from_secs(3)) < Duration::from_secs(4));
        let before = created.checked_sub(Duration::from_secs(1)).expect("a second of uptime");
        assert_eq!(endpoint.age(before), Duration::ZERO);
    }
}
