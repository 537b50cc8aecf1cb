//! ingress-nginx's `limit-rate` and `limit-rate-after`: the pod's body reaches the client at a
//! bounded rate once its first bytes are out, per request (nginx's `limit_rate`, checked by its
//! write filter).
//!
//! ```text
//! pod body ─▶ ResponseBody::poll_frame ─▶ Pacer::hold(chunk) ─▶ Pacer::poll_release ─▶ client
//!                                          one chunk at most      waits on a tokio timer until
//!                                                                 the budget covers a quantum
//! ```
//! The budget at `t` since the body began is `after + rate × t` bytes. nginx counts from the
//! request's start (and counts the head too), so it never sends less by then than shunt does:
//! the time a body takes here is a lower bound nginx keeps as well.

use std::{
    future::Future,
    pin::Pin,
    sync::LazyLock,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use prometheus_client::{metrics::counter::Counter, registry::Registry};
use tokio::time::{Instant, Sleep};

use crate::spec::ResponsePace;

/// Pod answers paced, every route (one counter for the process).
static PACED: LazyLock<Counter> = LazyLock::new(Counter::default);

/// Adds the pace's series to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(
        "shunt_responses_paced",
        "Pod answers sent at a route's pace (ingress-nginx's limit-rate)",
        PACED.clone(),
    );
}

const X_ACCEL_BUFFERING: &str = "x-accel-buffering";
const X_ACCEL_LIMIT_RATE: &str = "x-accel-limit-rate";

/// The most paced bytes let out at once: a tenth of a second's worth, so a client sees about
/// ten writes a second however large the pod's chunks (never more than one chunk is held).
const QUANTA_PER_SECOND: u64 = 10;

/// The elapsed time since the body began at which `total` bytes of it may have been sent.
pub fn due(pace: ResponsePace, total: u64) -> Duration {
    let Some(paced) = total.checked_sub(pace.after_bytes()).filter(|&paced| paced > 0) else {
        return Duration::ZERO;
    };
    let rate = u128::from(pace.bytes_per_second());
    // Rounded up: by then the budget covers `total` for certain.
    let nanos = (u128::from(paced) * 1_000_000_000).div_ceil(rate);
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// The bytes of the body that may have been sent `elapsed` after it began.
pub fn allowance(pace: ResponsePace, elapsed: Duration) -> u64 {
    let paced = u128::from(pace.bytes_per_second())
        .checked_mul(elapsed.as_nanos())
        .map_or(u128::MAX, |product| product / 1_000_000_000);
    pace.after_bytes()
        .saturating_add(u64::try_from(paced).unwrap_or(u64::MAX))
}

/// The pace of one pod answer with `headers` on a route paced at `pace`, as nginx's upstream
/// module reads them before its write filter paces: `X-Accel-Buffering: yes` or `no` (any
/// case) overrides the location's buffering, only a buffered answer is paced, and
/// `X-Accel-Limit-Rate` (bytes per second, digits only; the last one counts) replaces the
/// rate, `0` lifting it.
pub fn for_answer(pace: ResponsePace, headers: &HeaderMap) -> Option<ResponsePace> {
    let buffering = headers.get_all(X_ACCEL_BUFFERING).iter().next_back();
    let buffered = match buffering.map(HeaderValue::as_bytes) {
        Some(value) if value.eq_ignore_ascii_case(b"yes") => true,
        Some(value) if value.eq_ignore_ascii_case(b"no") => false,
        _ => pace.buffered(),
    };
    if !buffered {
        return None;
    }
    let rate = headers
        .get_all(X_ACCEL_LIMIT_RATE)
        .iter()
        .next_back()
        .and_then(ngx_atoi);
    match rate {
        Some(rate) => ResponsePace::new(rate, pace.after_bytes(), true),
        None => Some(pace),
    }
}

/// nginx's `ngx_atoi`: digits only, within what it holds.
fn ngx_atoi(value: &HeaderValue) -> Option<u64> {
    let digits = value.as_bytes();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits)
        .ok()?
        .parse::<i64>()
        .ok()
        .and_then(|n| u64::try_from(n).ok())
}

/// The bytes the pacer waits for before letting any out: a tenth of a second's worth, at
/// least one.
pub fn quantum(pace: ResponsePace) -> u64 {
    (pace.bytes_per_second() / QUANTA_PER_SECOND).max(1)
}

/// One answer's pace: the chunk it holds back and the timer it waits on.
pub struct Pacer {
    pace: ResponsePace,
    start: Instant,
    sent: u64,
    held: Bytes,
    /// Made at the first wait; reset for each one after.
    timer: Option<Pin<Box<Sleep>>>,
}

impl Pacer {
    pub fn new(pace: ResponsePace) -> Self {
        PACED.inc();
        Pacer {
            pace,
            start: Instant::now(),
            sent: 0,
            held: Bytes::new(),
            timer: None,
        }
    }

    /// Bytes taken from the pod and not yet let out.
    pub fn held(&self) -> u64 {
        self.held.len() as u64
    }

    /// Takes the pod's next chunk; only called once the previous one is out.
    pub fn hold(&mut self, chunk: Bytes) {
        debug_assert!(self.held.is_empty(), "one chunk held at a time");
        self.held = chunk;
    }

    /// The next part of the held chunk the budget allows: what is left of the first
    /// `after_bytes` at once, then at least a quantum (or what is left) once its time has come.
    pub fn poll_release(&mut self, cx: &mut Context<'_>) -> Poll<Bytes> {
        let least = quantum(self.pace).min(self.held());
        let mut budget = self.budget(Instant::now());
        if budget < least && self.sent >= self.pace.after_bytes() {
            // A time past what an Instant holds is a wait that never ends; a year stands for it.
            let wait = due(self.pace, self.sent.saturating_add(least));
            let due =
                (self.start.checked_add(wait)).unwrap_or_else(|| Instant::now() + Duration::from_secs(365 * 86_400));
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
            timer.as_mut().reset(due);
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            budget = self.budget(Instant::now().max(due));
        }
        let out = self.held.split_to(budget.min(self.held()) as usize);
        self.sent += out.len() as u64;
        Poll::Ready(out)
    }

    /// Bytes the pace lets out at `now` beyond those sent.
    fn budget(&self, now: Instant) -> u64 {
        allowance(self.pace, now - self.start).saturating_sub(self.sent)
    }
}

#[cfg(test)]
mod tests;
