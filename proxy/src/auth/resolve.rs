//! The auth service's addresses: an IP address as written; a name through the system resolver
//! (the cluster's DNS in a pod) as an absolute name, since nginx's `resolver` applies no search
//! domains, each answer kept 30 s (ingress-nginx's `resolver ... valid=30s`).

use std::{
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// How long a resolved name is kept.
const VALID: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(super) enum Addrs {
    Fixed(Arc<[SocketAddr]>),
    Named {
        /// `name.:port`: absolute, so no search domain is tried.
        query: String,
        cached: Mutex<Option<(Instant, Arc<[SocketAddr]>)>>,
    },
}

impl Addrs {
    pub(super) fn new(host: &str, port: u16) -> Self {
        match host.parse::<IpAddr>() {
            Ok(ip) => Addrs::Fixed(Arc::from([SocketAddr::new(ip, port)])),
            Err(_) => {
                let dot = if host.ends_with('.') { "" } else { "." };
                Addrs::Named {
                    query: format!("{host}{dot}:{port}"),
                    cached: Mutex::new(None),
                }
            }
        }
    }

    /// The addresses, looked up when the cache has none fresh; within `timeout`.
    pub(super) async fn get(&self, timeout: Duration) -> Result<Arc<[SocketAddr]>, String> {
        let (query, cached) = match self {
            Addrs::Fixed(addrs) => return Ok(addrs.clone()),
            Addrs::Named { query, cached } => (query, cached),
        };
        let lock = || cached.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, addrs)) = lock().as_ref()
            && at.elapsed() < VALID
        {
            return Ok(addrs.clone());
        }
        let found = match tokio::time::timeout(timeout, tokio::net::lookup_host(query.as_str())).await {
            Ok(Ok(found)) => found.collect::<Vec<_>>(),
            Ok(Err(error)) => return Err(format!("resolving {query}: {error}")),
            Err(_) => return Err(format!("resolving {query}: timed out")),
        };
        if found.is_empty() {
            return Err(format!("resolving {query}: no address"));
        }
        let addrs: Arc<[SocketAddr]> = found.into();
        *lock() = Some((Instant::now(), addrs.clone()));
        Ok(addrs)
    }
}
