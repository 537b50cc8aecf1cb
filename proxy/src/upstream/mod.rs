//! Backends: a set of pod endpoints with load counters, how to pick one, and the worker's
//! connections to them.

pub mod auth;
mod balance;
mod body;
pub mod budget;
mod chain;
mod client;
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
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::uri::Authority;

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
use crate::{h1::decimal_digits, metrics::UpstreamStats, spec::UpstreamProtocol};

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

/// A pod address and the requests it is serving right now.
pub struct Endpoint {
    pub addr: SocketAddr,
    /// `ip:port`, ready to go into a request URI (the pool key).
    pub authority: Authority,
    in_flight: AtomicUsize,
    /// Failures and ejection (passive health), shared by every worker.
    pub health: Health,
    /// When this proxy first routed to it: its slow-start window counts from here.
    since: Instant,
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
            authority: authority_of(addr),
            in_flight: AtomicUsize::new(0),
            health: Health::default(),
            since: Instant::now(),
            warm: AtomicBool::new(false),
        }
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }
}

/// `ip:port` as `SocketAddr`'s `Display` writes it. IPv4 digit by digit into a stack buffer
/// (`fmt` is slow for the one authority per endpoint a publish makes), then copied once into an
/// allocation of its exact size: a `String` with spare capacity would become `Bytes` through a
/// second allocation. `Authority` still checks the characters; it keeps the bytes without a copy.
fn authority_of(addr: SocketAddr) -> Authority {
    let SocketAddr::V4(v4) = addr else {
        return Authority::try_from(addr.to_string()).expect("a socket address is a valid authority");
    };
    let mut out = [0u8; "255.255.255.255:65535".len()];
    let mut len = 0;
    let mut push = |byte: u8| {
        out[len] = byte;
        len += 1;
    };
    for (index, octet) in v4.ip().octets().into_iter().enumerate() {
        if index > 0 {
            push(b'.');
        }
        decimal_digits(octet.into(), &mut push);
    }
    push(b':');
    decimal_digits(v4.port(), &mut push);
    Authority::from_maybe_shared(Bytes::copy_from_slice(&out[..len])).expect("a socket address is a valid authority")
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, SocketAddrV4};

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn an_endpoint_authority_is_its_address_as_display_writes_it(ip in any::<u32>(), port in any::<u16>()) {
            let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(ip), port));
            let endpoint = Endpoint::new(addr);
            prop_assert_eq!(endpoint.authority.as_str(), addr.to_string());
        }
    }
}
