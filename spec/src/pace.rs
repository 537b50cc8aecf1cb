//! The pace of an answer's body towards the client, as nginx's `limit_rate` and
//! `limit_rate_after` set it (ingress-nginx's `limit-rate` and `limit-rate-after`): per request,
//! the first `after_bytes` go at once, the rest at `bytes_per_second`. nginx paces only an
//! answer it buffers (`proxy_buffering`, ingress-nginx's `proxy-buffering`, off by default;
//! `ngx_http_upstream_send_response` sets `limit_rate` to 0 for an unbuffered one), and the pod
//! may turn buffering on or off per answer with `X-Accel-Buffering`.

use std::num::NonZeroU64;

use serde::Serialize;

/// One request's answer paced: valid by construction (a rate of zero paces nothing, so it is
/// no pace at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ResponsePace {
    bytes_per_second: NonZeroU64,
    after_bytes: u64,
    /// The location buffers the pod's answers unless one says otherwise.
    buffered: bool,
}

impl ResponsePace {
    /// `None` for a rate of zero, which nginx reads as no limit.
    pub fn new(bytes_per_second: u64, after_bytes: u64, buffered: bool) -> Option<Self> {
        Some(ResponsePace {
            bytes_per_second: NonZeroU64::new(bytes_per_second)?,
            after_bytes,
            buffered,
        })
    }

    pub const fn bytes_per_second(&self) -> u64 {
        self.bytes_per_second.get()
    }

    /// Bytes of the body sent before the pace applies.
    pub const fn after_bytes(&self) -> u64 {
        self.after_bytes
    }

    /// Whether an answer without `X-Accel-Buffering` is buffered, and so paced.
    pub const fn buffered(&self) -> bool {
        self.buffered
    }
}
