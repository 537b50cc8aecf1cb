//! `limit-rps`, `limit-rpm`, `limit-connections` and their companions read as ingress-nginx
//! reads them (internal/ingress/annotations/ratelimit/main.go), into the [`RateLimits`] the
//! proxy applies: one zone per Ingress, shared by its locations; a burst of the limit times
//! `limit-burst-multiplier` (5); `limit-allowlist` (or `limit-whitelist`) exempt.
//!
//! The address is the caller's as shunt sees it, a pod's; behind the load balancer
//! ingress-nginx may see a node's or the NAT's for the same caller, and so pool callers shunt
//! counts apart. An allowlist naming internal space could tell the two apart: refused, as
//! source ranges are (see `source_ranges.rs`).

use crate::objects::Ingress;
use shunt_spec::{RateLimits, RatePeriod, RequestRate};

use super::{
    annotations::Refusal,
    pace::PaceKeys,
    source_ranges::{self, RangeList},
};

/// ratelimit/main.go's `defBurst`.
const DEFAULT_BURST_MULTIPLIER: u32 = 5;

/// The rate-limit keys of one Ingress, as written; resolved once all are seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitKeys {
    rps: Option<String>,
    rpm: Option<String>,
    connections: Option<String>,
    burst_multiplier: Option<String>,
    allowlist: Option<String>,
    whitelist: Option<String>,
    rate: Option<String>,
    rate_after: Option<String>,
    /// `proxy-buffering`, a key of no effect but on what `limit-rate` paces.
    buffering: Option<String>,
}

/// The ConfigMap's answers to a limited request (`limit-req-status-code`,
/// `limit-conn-status-code`: 503).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitStatus {
    pub rate: u16,
    pub connections: u16,
}

impl Default for LimitStatus {
    fn default() -> Self {
        LimitStatus {
            rate: 503,
            connections: 503,
        }
    }
}

impl LimitKeys {
    /// Keeps `value` when `name` (without the prefix) is a rate-limit key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let slot = match name {
            "limit-rps" => &mut self.rps,
            "limit-rpm" => &mut self.rpm,
            "limit-connections" => &mut self.connections,
            "limit-burst-multiplier" => &mut self.burst_multiplier,
            "limit-allowlist" => &mut self.allowlist,
            "limit-whitelist" => &mut self.whitelist,
            "limit-rate" => &mut self.rate,
            "limit-rate-after" => &mut self.rate_after,
            "proxy-buffering" => &mut self.buffering,
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }

    /// The limits of `ingress`'s zone, or the key that refuses its hosts.
    pub fn resolve(
        &self,
        ingress: &Ingress,
        status: LimitStatus,
    ) -> Result<Option<RateLimits>, (Refusal, &'static str)> {
        let rps = count(self.rps.as_deref()).map_err(|r| (r, "limit-rps"))?;
        let rpm = count(self.rpm.as_deref()).map_err(|r| (r, "limit-rpm"))?;
        let connections = count(self.connections.as_deref()).map_err(|r| (r, "limit-connections"))?;
        if rps == 0 && rpm == 0 && connections == 0 {
            return Ok(None);
        }
        // Any error, a missing key or a bad value, keeps the default (main.go).
        let multiplier = count(self.burst_multiplier.as_deref())
            .ok()
            .filter(|_| self.burst_multiplier.is_some())
            .unwrap_or(DEFAULT_BURST_MULTIPLIER);
        let exempt = self.exempt().map_err(|r| (r, "limit-allowlist"))?;
        let rate = |limit: u32, period| {
            (limit > 0).then(|| RequestRate {
                limit,
                period,
                burst: limit.saturating_mul(multiplier),
            })
        };
        let namespace = ingress.metadata.namespace.as_deref().unwrap_or("default");
        let name = ingress.metadata.name.as_deref().unwrap_or_default();
        Ok(Some(RateLimits {
            zone: format!("{namespace}/{name}"),
            // buildRateLimit's order: the per-second zone, then the per-minute one.
            requests: [rate(rps, RatePeriod::Second), rate(rpm, RatePeriod::Minute)]
                .into_iter()
                .flatten()
                .collect(),
            connections: (connections > 0).then_some(connections),
            exempt,
            rate_status: status.rate,
            connection_status: status.connections,
        }))
    }

    /// `limit-rate` and `limit-rate-after`, read apart: they need no zone (see `pace.rs`).
    pub fn pace(&self) -> Result<PaceKeys, (Refusal, &'static str)> {
        let mut keys = PaceKeys::annotations(self.rate.as_deref(), self.rate_after.as_deref())?;
        if let Some(value) = &self.buffering {
            keys.buffering_annotation(value);
        }
        Ok(keys)
    }

    /// `limit-allowlist`, or its alias when it is absent.
    fn exempt(&self) -> Result<Vec<ipnet::IpNet>, Refusal> {
        let Some(value) = self.allowlist.as_deref().or(self.whitelist.as_deref()) else {
            return Ok(Vec::new());
        };
        match source_ranges::read(value) {
            RangeList::AllowAll => Ok(["0.0.0.0/0", "::/0"].map(|all| all.parse().expect("valid")).to_vec()),
            RangeList::Public(ranges) => Ok(ranges),
            RangeList::Internal => Err(Refusal::Unsupported),
            RangeList::Invalid => Err(Refusal::Invalid),
        }
    }
}

/// parser.ValidateInt then `strconv.Atoi`: digits; a missing key is 0. A negative number is
/// refused (nginx would refuse the zone).
fn count(value: Option<&str>) -> Result<u32, Refusal> {
    let Some(value) = value else { return Ok(0) };
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refusal::Invalid);
    }
    value.parse().map_err(|_| Refusal::Invalid)
}

/// `limit-req-status-code` and `limit-conn-status-code`: what `limit_req_status` takes.
pub fn status_code(value: &str) -> Option<u16> {
    value.trim().parse().ok().filter(|code| (400..=599).contains(code))
}

#[cfg(test)]
mod tests;
