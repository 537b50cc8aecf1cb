//! nginx's leaky bucket for `limit_req ... burst=B nodelay` (ngx_http_limit_req_module.c,
//! `ngx_http_limit_req_lookup` and `_account`), in its own integer units: thousandths of a
//! request, milliseconds.

/// One caller's state in one rate: how far over the rate it is, as of `last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bucket {
    /// Thousandths of a request above the rate.
    pub excess: u64,
    /// Milliseconds on the limiter's clock.
    pub last: u64,
}

impl Bucket {
    /// A caller seen for the first time: nginx starts it at no excess, so its first request
    /// costs nothing.
    pub fn new(now: u64) -> Self {
        Bucket { excess: 0, last: now }
    }

    /// The excess after one more request at `now`, leaking `milli_per_second` since `last`.
    pub fn excess_after_request(&self, now: u64, milli_per_second: u64) -> u64 {
        let elapsed = now.saturating_sub(self.last);
        let leaked = milli_per_second.saturating_mul(elapsed) / 1000;
        // Signed, clamped only after the request is added, as nginx does: a bucket that leaked
        // a whole request takes the next at no excess.
        (self.excess + 1000).saturating_sub(leaked)
    }

    /// Whether the bucket has drained by `now` and sat idle a minute: nginx frees such a
    /// caller's state (`ngx_http_limit_req_expire`), which then answers as a new caller.
    pub fn expired(&self, now: u64, milli_per_second: u64) -> bool {
        let elapsed = now.saturating_sub(self.last);
        elapsed >= 60_000 && milli_per_second.saturating_mul(elapsed) / 1000 >= self.excess
    }
}

/// Whether a request with `excess` after it stays within `burst` requests.
pub(super) fn within(excess: u64, burst: u32) -> bool {
    excess <= u64::from(burst) * 1000
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_burst_of_b_admits_b_plus_one_at_once_then_one_per_period() {
        // rate 1 r/s, burst 5: the first request is free, five more fill the burst.
        let rate = 1000;
        let mut bucket = Bucket::new(0);
        let mut admitted = 1;
        for _ in 0..10 {
            let excess = bucket.excess_after_request(0, rate);
            if within(excess, 5) {
                bucket.excess = excess;
                admitted += 1;
            }
        }
        assert_eq!(admitted, 6);
        // A second later one request has leaked out.
        assert!(within(bucket.excess_after_request(1000, rate), 5));
        assert!(!within(bucket.excess_after_request(999, rate), 5));
    }

    proptest! {
        /// Over any span, admitted requests never exceed what the rate allowed plus the burst
        /// and the free first one.
        #[test]
        fn admissions_are_bounded_by_rate_and_burst(
            per_second in 1u64..50,
            burst in 0u32..20,
            gaps in proptest::collection::vec(0u64..200, 1..300),
        ) {
            let rate = per_second * 1000;
            let mut bucket = Bucket::new(0);
            let (mut now, mut admitted) = (0u64, 1u64);
            for gap in gaps {
                now += gap;
                let excess = bucket.excess_after_request(now, rate);
                if within(excess, burst) {
                    bucket = Bucket { excess, last: now };
                    admitted += 1;
                }
            }
            let allowed = 1 + u64::from(burst) + 1 + per_second * now / 1000;
            prop_assert!(admitted <= allowed, "{admitted} admitted, at most {allowed}");
        }

        /// A caller slower than the rate is never refused.
        #[test]
        fn a_caller_within_the_rate_is_never_refused(per_second in 1u64..50, burst in 0u32..5, n in 1usize..200) {
            let rate = per_second * 1000;
            let gap = 1000u64.div_ceil(per_second);
            let mut bucket = Bucket::new(0);
            for i in 1..=n as u64 {
                let excess = bucket.excess_after_request(i * gap, rate);
                prop_assert!(within(excess, burst));
                bucket = Bucket { excess, last: i * gap };
            }
        }
    }
}
