//! Request and connection limits per caller address, as nginx's `limit_req` (a leaky bucket,
//! `burst=N nodelay`) and `limit_conn` apply them: ingress-nginx's `limit-rps`, `limit-rpm` and
//! `limit-connections`. Counted per proxy replica, as each ingress-nginx pod counts its own.

use serde::Serialize;

/// The limits of one zone: every route of one Ingress shares its counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RateLimits {
    /// Names the zone's counts, which outlive a table: the next table with an equal spec keeps
    /// counting where this one was.
    pub zone: String,
    /// At most two, one per period, each checked in turn (nginx's `limit_req` lines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRate>,
    /// Requests in progress from one address at once (`limit_conn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// Caller addresses never limited (`limit-allowlist`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exempt: Vec<ipnet::IpNet>,
    /// The status of a request over a rate (`limit-req-status-code`, 503).
    pub rate_status: u16,
    /// The status of a request over the connection limit (`limit-conn-status-code`, 503).
    pub connection_status: u16,
}

/// `limit_req_zone ... rate=N r/s` (or `r/m`) with `limit_req ... burst=B nodelay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RequestRate {
    /// Requests per `period`.
    pub limit: u32,
    pub period: RatePeriod,
    /// Requests beyond the rate taken at once before refusing.
    pub burst: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RatePeriod {
    Second,
    Minute,
}

impl RequestRate {
    /// The rate as nginx keeps it: thousandths of a request per second, rounded down
    /// (`ngx_http_limit_req_zone`: `rate * 1000 / scale`).
    pub const fn milli_per_second(&self) -> u64 {
        let limit = self.limit as u64 * 1000;
        match self.period {
            RatePeriod::Second => limit,
            RatePeriod::Minute => limit / 60,
        }
    }
}

impl RateLimits {
    /// Whether `addr` is exempt from every limit.
    pub fn exempts(&self, addr: std::net::IpAddr) -> bool {
        let addr = addr.to_canonical();
        self.exempt.iter().any(|net| net.contains(&addr))
    }
}
