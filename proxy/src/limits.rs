//! ingress-nginx's `limit-rps`, `limit-rpm` and `limit-connections`: requests and requests in
//! progress per caller address, in nginx's order and arithmetic (`limit_req` before
//! `limit_conn`, every rate checked before any is charged), each zone's states capped.
//!
//! ```text
//! publish ─▶ limiter_for(spec) ─▶ Arc<Limiter> (the previous table's, for an equal spec)
//! answer ─▶ Limiter::admit(addr) ─▶ Ok(guard: one request in progress until the body is done)
//!                                └▶ Err(Limited): 503 (or the ConfigMap's code)
//! ```
//! Counts are per proxy replica, as each ingress-nginx pod keeps its own zones.

mod bucket;
mod keys;
mod registry;
mod stats;

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, LazyLock, Mutex, MutexGuard},
    time::Instant,
};

use http::StatusCode;

use self::{bucket::Bucket, keys::Keys, stats::STATS};
pub use self::{registry::limiter_for, stats::register};
use crate::spec::RateLimits;

/// Caller states one rate of one zone holds at most: what nginx's 5 MB zone holds of
/// 64-byte states, about 1.5 MB here.
const KEYS_PER_ZONE: usize = 65_536;
/// Rates one zone checks at most: one per period (`RateLimits::requests`).
const MAX_RATES: usize = 2;

/// Which limit refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    Rate,
    Connections,
}

/// A refusal and the status it is answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limited {
    pub kind: LimitKind,
    pub status: StatusCode,
}

/// One zone: the states of every rate and the requests in progress per address.
pub struct Limiter {
    spec: RateLimits,
    rates: Vec<Rate>,
    in_progress: Mutex<HashMap<IpAddr, u32, foldhash::fast::RandomState>>,
}

struct Rate {
    milli_per_second: u64,
    burst: u32,
    states: Mutex<Keys<Bucket>>,
}

/// One request in progress from `addr`, counted until dropped (with the response body).
#[derive(Debug)]
pub struct InProgress {
    limiter: Arc<Limiter>,
    addr: IpAddr,
}

/// Milliseconds on one clock for every zone.
fn now_ms() -> u64 {
    static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
    u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A poisoned lock still holds counts that are whole (each update is one assignment).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// === impl Limiter ===

impl Limiter {
    fn new(spec: &RateLimits) -> Self {
        // The contract allows one rate per period; more would be a compile defect, not a
        // tenant's input, and only the first two are checked.
        debug_assert!(spec.requests.len() <= MAX_RATES);
        let rates = spec
            .requests
            .iter()
            .take(MAX_RATES)
            .map(|rate| Rate {
                milli_per_second: rate.milli_per_second(),
                burst: rate.burst,
                states: Mutex::new(Keys::new(KEYS_PER_ZONE)),
            })
            .collect();
        Limiter {
            spec: spec.clone(),
            rates,
            in_progress: Mutex::default(),
        }
    }

    /// Admits one request from `addr` or says which limit refuses it; an admitted request
    /// under a connection limit holds its place until the returned guard drops.
    pub fn admit(self: &Arc<Self>, addr: IpAddr) -> Result<Option<InProgress>, Limited> {
        let addr = addr.to_canonical();
        if self.spec.exempts(addr) {
            return Ok(None);
        }
        if !self.take_rates(addr, now_ms()) {
            STATS.limited(LimitKind::Rate);
            return Err(Limited {
                kind: LimitKind::Rate,
                status: status(self.spec.rate_status),
            });
        }
        let Some(most) = self.spec.connections else {
            return Ok(None);
        };
        let mut in_progress = lock(&self.in_progress);
        let count = in_progress.entry(addr).or_default();
        if *count >= most {
            if *count == 0 {
                in_progress.remove(&addr);
            }
            drop(in_progress);
            STATS.limited(LimitKind::Connections);
            return Err(Limited {
                kind: LimitKind::Connections,
                status: status(self.spec.connection_status),
            });
        }
        *count += 1;
        Ok(Some(InProgress {
            limiter: self.clone(),
            addr,
        }))
    }

    /// Checks every rate, then charges them all, or none when one refuses
    /// (`ngx_http_limit_req_handler` looks up each limit, accounts only when all pass).
    fn take_rates(&self, addr: IpAddr, now: u64) -> bool {
        // Fixed arrays, not Vecs: this runs on every request of a limited route.
        let mut locked: [Option<MutexGuard<'_, Keys<Bucket>>>; MAX_RATES] =
            std::array::from_fn(|at| self.rates.get(at).map(|rate| lock(&rate.states)));
        let mut charges = [None; MAX_RATES];
        let last = self.rates.len().saturating_sub(1);
        for (at, (rate, states)) in self.rates.iter().zip(locked.iter_mut().flatten()).enumerate() {
            let Some(bucket) = states.get_mut(&addr) else {
                // A new caller starts at no excess, and keeps its state even when another rate
                // refuses the request. Only the last rate lets it in free: nginx charges the
                // earlier ones once all pass (`ngx_http_limit_req_account`).
                let expired = |state: &Bucket| state.expired(now, rate.milli_per_second);
                let evicted = states.insert(addr, Bucket::new(now), expired, |state| state.last);
                STATS.states_added(evicted);
                charges[at] = (at < last).then_some(1000);
                continue;
            };
            let excess = bucket.excess_after_request(now, rate.milli_per_second);
            if !bucket::within(excess, rate.burst) {
                return false;
            }
            charges[at] = Some(excess);
        }
        for (states, charge) in locked.iter_mut().flatten().zip(charges) {
            if let (Some(excess), Some(bucket)) = (charge, states.get_mut(&addr)) {
                *bucket = Bucket { excess, last: now };
            }
        }
        true
    }
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter")
            .field("zone", &self.spec.zone)
            .finish_non_exhaustive()
    }
}

impl Drop for Limiter {
    fn drop(&mut self) {
        let held: usize = self
            .rates
            .iter_mut()
            .map(|rate| rate.states.get_mut().map_or(0, |s| s.len()))
            .sum();
        STATS.states_dropped(held);
    }
}

/// A configured code nginx would send (`limit_req_status` takes 400 to 599).
fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code)
        .ok()
        .filter(|status| status.is_client_error() || status.is_server_error())
        .unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
}

// === impl InProgress ===

impl Drop for InProgress {
    fn drop(&mut self) {
        let mut in_progress = lock(&self.limiter.in_progress);
        if let Some(count) = in_progress.get_mut(&self.addr) {
            *count -= 1;
            if *count == 0 {
                in_progress.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests;
