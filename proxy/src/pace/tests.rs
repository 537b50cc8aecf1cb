use std::{future::poll_fn, time::Duration};

use bytes::Bytes;
use proptest::prelude::*;

use super::*;

fn pace(rate: u64, after: u64) -> ResponsePace {
    ResponsePace::new(rate, after, true).expect("a rate above zero")
}

fn headers(fields: &[(&'static str, &'static str)]) -> HeaderMap {
    fields
        .iter()
        .map(|(name, value)| (http::HeaderName::from_static(name), HeaderValue::from_static(value)))
        .collect()
}

#[test]
fn only_a_buffered_answer_is_paced_and_the_pod_may_say_which() {
    let unbuffered = ResponsePace::new(1024, 0, false).expect("a rate");
    assert_eq!(
        for_answer(unbuffered, &headers(&[])),
        None,
        "proxy_buffering off: nginx sets limit_rate 0"
    );
    let turned_on = for_answer(unbuffered, &headers(&[("x-accel-buffering", "YES")]));
    assert_eq!(turned_on.map(|p| p.bytes_per_second()), Some(1024));
    let buffered = pace(1024, 0);
    assert_eq!(for_answer(buffered, &headers(&[("x-accel-buffering", "no")])), None);
    assert_eq!(
        for_answer(buffered, &headers(&[("x-accel-buffering", "maybe")])),
        Some(buffered)
    );
}

#[test]
fn the_pods_limit_rate_replaces_the_routes_when_digits() {
    let buffered = pace(1024, 4096);
    let replaced = for_answer(buffered, &headers(&[("x-accel-limit-rate", "100")]));
    assert_eq!(replaced, ResponsePace::new(100, 4096, true));
    assert_eq!(for_answer(buffered, &headers(&[("x-accel-limit-rate", "0")])), None);
    for ignored in ["-5", "10k", "", "99999999999999999999"] {
        let fields = headers(&[("x-accel-limit-rate", ignored)]);
        assert_eq!(for_answer(buffered, &fields), Some(buffered), "{ignored:?}");
    }
}

proptest! {
    /// `due` is the first moment the budget covers `total`: covered then, not a nanosecond before.
    #[test]
    fn due_is_when_the_allowance_first_covers_the_bytes(
        rate in 1u64..10_000_000_000,
        after in 0u64..1 << 40,
        total in 0u64..1 << 40,
    ) {
        let pace = pace(rate, after);
        let at = due(pace, total);
        prop_assert!(allowance(pace, at) >= total);
        if let Some(before) = at.checked_sub(Duration::from_nanos(1)) {
            prop_assert!(allowance(pace, before) < total);
        }
    }

    /// The first `after` bytes are due at once; more bytes are never due sooner.
    #[test]
    fn more_bytes_are_never_due_sooner(rate in 1u64..1 << 40, after in 0u64..1 << 30, a in 0u64..1 << 40, b in 0u64..1 << 40) {
        let pace = pace(rate, after);
        let (low, high) = (a.min(b), a.max(b));
        prop_assert!(due(pace, low) <= due(pace, high));
        prop_assert_eq!(due(pace, after), Duration::ZERO);
    }

    /// Huge values saturate instead of wrapping.
    #[test]
    fn the_arithmetic_never_wraps(rate in 1u64..=u64::MAX, after in 0u64..=u64::MAX, secs in 0u64..=u64::MAX) {
        let pace = pace(rate, after);
        prop_assert!(allowance(pace, Duration::from_secs(secs)) >= after);
        let _ = due(pace, u64::MAX);
    }
}

/// Lets all of `chunk` out through a pacer, returning the sizes released in order.
async fn drain(pacer: &mut Pacer, chunk: Bytes) -> Vec<usize> {
    pacer.hold(chunk);
    let mut parts = Vec::new();
    while pacer.held() > 0 {
        parts.push(poll_fn(|cx| pacer.poll_release(cx)).await.len());
    }
    parts
}

#[tokio::test(start_paused = true)]
async fn the_first_bytes_go_at_once_and_the_rest_at_the_rate() {
    // 1 KiB/s after 4 KiB: a 10 KiB chunk takes 6 s, released a tenth of a second at a time.
    let mut pacer = Pacer::new(pace(1024, 4096));
    let start = Instant::now();
    let parts = drain(&mut pacer, Bytes::from(vec![0u8; 10 * 1024])).await;
    assert_eq!(parts[0], 4096, "the unpaced bytes in the first release");
    assert_eq!(parts.iter().sum::<usize>(), 10 * 1024);
    // tokio's timers tick in milliseconds: a release may carry a millisecond's bytes more.
    let (last, paced) = parts[1..].split_last().expect("paced releases");
    assert!(paced.iter().all(|&part| (102..=110).contains(&part)), "{parts:?}");
    assert!(*last <= 110, "{parts:?}");
    let took = Instant::now() - start;
    assert!(took >= due(pace(1024, 4096), 10 * 1024), "{took:?}");
    assert!(
        took < Duration::from_millis(6100),
        "virtual time, without slack for the machine: {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_pod_does_not_hold_back_bytes_it_was_late_with() {
    // The budget keeps growing while the pod is silent, as nginx's does.
    let mut pacer = Pacer::new(pace(1000, 0));
    tokio::time::advance(Duration::from_secs(5)).await;
    let parts = drain(&mut pacer, Bytes::from(vec![0u8; 4000])).await;
    assert_eq!(parts, [4000]);
}
