//! Backends: a set of pod endpoints with load counters, how to pick one, and the worker's
//! connections to them.

mod balance;
mod client;
mod connect;
mod h2;
pub mod pool;
pub mod retry;

use std::{
    fmt,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use http::uri::Authority;

pub use self::{
    balance::EndpointGuard,
    client::{ClientOptions, Lease, UpstreamClients},
};
use crate::{metrics::UpstreamStats, routes::spec::UpstreamProtocol};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

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
}

impl UpstreamError {
    pub fn is_connect(&self) -> bool {
        matches!(self, UpstreamError::Connect(_))
    }

    fn connect_timeout() -> Self {
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
}

/// A pod address and the requests it is serving right now.
pub struct Endpoint {
    pub addr: SocketAddr,
    /// `ip:port`, ready to go into a request URI (the pool key).
    pub authority: Authority,
    in_flight: AtomicUsize,
}

// === impl Upstream ===

impl Upstream {
    pub fn new(id: &str, protocol: UpstreamProtocol, endpoints: Vec<Arc<Endpoint>>, stats: UpstreamStats) -> Self {
        Upstream {
            id: id.into(),
            protocol,
            endpoints: endpoints.into_boxed_slice(),
            stats,
        }
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
        let authority = Authority::try_from(authority_of(addr)).expect("a socket address is a valid authority");
        Endpoint {
            addr,
            authority,
            in_flight: AtomicUsize::new(0),
        }
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }
}

/// `ip:port` as `SocketAddr`'s `Display` writes it. IPv4 digit by digit: through `fmt` it was a
/// fifth of publishing a table with 50k endpoints.
fn authority_of(addr: SocketAddr) -> String {
    let SocketAddr::V4(v4) = addr else {
        return addr.to_string();
    };
    let mut out = String::with_capacity("255.255.255.255:65535".len());
    for (index, octet) in v4.ip().octets().into_iter().enumerate() {
        if index > 0 {
            out.push('.');
        }
        push_decimal(&mut out, octet.into());
    }
    out.push(':');
    push_decimal(&mut out, v4.port());
    out
}

/// Appends `number` in decimal, without a formatter (publishing writes one per endpoint, and
/// compile one per backend id).
pub fn push_decimal(out: &mut String, number: u16) {
    let mut digits = [0u8; 5];
    let mut at = digits.len();
    let mut rest = number;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&digit| char::from(digit)));
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
            prop_assert_eq!(authority_of(addr), addr.to_string());
            let endpoint = Endpoint::new(addr);
            prop_assert_eq!(endpoint.authority.as_str(), addr.to_string());
        }
    }
}
