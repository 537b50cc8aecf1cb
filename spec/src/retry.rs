//! How failed tries are sent again and counted against endpoints: the retries, their budget
//! per upstream, and outlier ejection (`--retries`, `--retry-budget-*`, `--eject-*`).

use std::{fmt, time::Duration};

use crate::defaults;

/// How failed tries are sent again and counted against endpoints; one per proxy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Extra tries of an idempotent request after a reset or a timeout (`--retries`).
    pub retries: usize,
    pub budget: BudgetOptions,
    pub outlier: OutlierOptions,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: defaults::RETRIES as usize,
            budget: BudgetOptions::default(),
            outlier: OutlierOptions::default(),
        }
    }
}

/// How many retries an upstream may send (`--retry-budget-*` flags).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetOptions {
    /// Retries per request over the last second, e.g. 0.2 for one retry per five requests.
    pub ratio: f64,
    /// Retries per second allowed whatever the request rate.
    pub min_per_second: u32,
}

impl Default for BudgetOptions {
    fn default() -> Self {
        BudgetOptions {
            ratio: defaults::RETRY_BUDGET_RATIO,
            min_per_second: defaults::RETRY_BUDGET_MIN,
        }
    }
}

/// How failures take an endpoint out of the choice (`--eject-*` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutlierOptions {
    /// Failed tries in a row that eject an endpoint; 0 turns ejection off.
    pub consecutive_failures: u32,
    /// Whether a 5xx answer counts as a failed try (a connect failure or a reset always does).
    pub count_5xx: bool,
    /// The first ejection's length; the n-th lasts n times as long, at most `MAX_EJECTIONS` times.
    pub base_ejection: Duration,
    /// The largest share of an upstream's endpoints out at once, in percent (rounded down).
    pub max_ejected_percent: u8,
}

impl Default for OutlierOptions {
    fn default() -> Self {
        OutlierOptions {
            consecutive_failures: defaults::EJECT_AFTER,
            count_5xx: false,
            base_ejection: defaults::EJECT_TIME,
            max_ejected_percent: defaults::EJECT_MAX_PERCENT,
        }
    }
}

/// RetryReason a failed try is sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryReason {
    ConnectFailed,
    NeverProcessed,
    /// Reset or closed before any byte of a response (often a pooled connection the pod closed).
    StaleConnection,
    Timeout,
    /// A response head that does not parse (a route's `invalid_header` rule).
    InvalidHeader,
    /// An answer whose status the route's rules retry (`http_503` and the like).
    Status,
}

impl RetryReason {
    pub const ALL: [RetryReason; 6] = [
        RetryReason::ConnectFailed,
        RetryReason::NeverProcessed,
        RetryReason::StaleConnection,
        RetryReason::Timeout,
        RetryReason::InvalidHeader,
        RetryReason::Status,
    ];

    /// The `reason` label of `shunt_upstream_retries`.
    pub const fn as_label(self) -> &'static str {
        match self {
            RetryReason::ConnectFailed => "connect",
            RetryReason::NeverProcessed => "never_processed",
            RetryReason::StaleConnection => "reset",
            RetryReason::Timeout => "timeout",
            RetryReason::InvalidHeader => "invalid_header",
            RetryReason::Status => "status",
        }
    }
}

impl fmt::Display for RetryReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RetryReason::ConnectFailed => "connect failed, trying another endpoint",
            RetryReason::NeverProcessed => "the pod did not process the request, retrying once",
            RetryReason::StaleConnection => "reset before any response byte, trying another endpoint",
            RetryReason::Timeout => "no response head in time, trying another endpoint",
            RetryReason::InvalidHeader => "invalid response head, trying another endpoint",
            RetryReason::Status => "the route retries this status, trying another endpoint",
        })
    }
}
