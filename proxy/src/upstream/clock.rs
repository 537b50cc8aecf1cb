//! One origin for the upstream state's timestamps: a time kept as nanoseconds from it is 8 bytes
//! where an `Instant` is 16, and 50,000 endpoints each keep one.

use std::{sync::OnceLock, time::Instant};

/// The origin: the first time any upstream state read the clock.
pub(super) fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds from [`epoch`] to `at`, negative before it (saturating some 292 years out).
pub(super) fn nanos(at: Instant) -> i64 {
    let origin = epoch();
    match at.checked_duration_since(origin) {
        Some(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        None => i64::try_from(origin.duration_since(at).as_nanos()).map_or(i64::MIN, |before| -before),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn nanos_keep_the_order_and_distance_of_instants(a in 0u64..10_000_000_000, b in 0u64..10_000_000_000) {
            let origin = epoch();
            let base = origin.checked_sub(Duration::from_secs(5)).unwrap_or(origin);
            let (at_a, at_b) = (base + Duration::from_nanos(a), base + Duration::from_nanos(b));
            let expected = i128::from(b) - i128::from(a);
            prop_assert_eq!(i128::from(nanos(at_b)) - i128::from(nanos(at_a)), expected);
        }
    }
}
