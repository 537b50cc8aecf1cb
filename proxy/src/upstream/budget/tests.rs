use std::time::Duration;

use super::*;

fn mk_options(ratio: f64, min_per_second: u32) -> BudgetOptions {
    BudgetOptions { ratio, min_per_second }
}

/// A moment well into a second of the budget's clock, so a test does not straddle two.
fn mk_second(n: u64) -> Instant {
    epoch() + Duration::from_secs(n) + Duration::from_millis(100)
}

#[test]
fn the_minimum_is_allowed_with_no_requests() {
    let budget = RetryBudget::default();
    let options = mk_options(0.2, 3);
    let now = mk_second(10);
    let granted = (0..10).filter(|_| budget.withdraw(now, &options)).count();
    assert_eq!(granted, 3);
}

#[test]
fn the_ratio_of_requests_adds_to_the_minimum() {
    let budget = RetryBudget::default();
    let options = mk_options(0.2, 0);
    let now = mk_second(10);
    for _ in 0..100 {
        budget.deposit(now);
    }
    let granted = (0..100).filter(|_| budget.withdraw(now, &options)).count();
    assert_eq!(granted, 20);
}

#[test]
fn a_new_second_starts_from_the_requests_of_the_last() {
    let budget = RetryBudget::default();
    let options = mk_options(0.5, 0);
    for _ in 0..10 {
        budget.deposit(mk_second(20));
    }
    assert_eq!((0..10).filter(|_| budget.withdraw(mk_second(20), &options)).count(), 5);
    // The next second: the last one's requests still count, its retries do not.
    assert_eq!((0..10).filter(|_| budget.withdraw(mk_second(21), &options)).count(), 5);
    // A quiet second in between forgets them.
    assert_eq!((0..10).filter(|_| budget.withdraw(mk_second(23), &options)).count(), 0);
}

#[test]
fn retries_over_many_seconds_stay_within_the_budget_of_the_requests() {
    let budget = RetryBudget::default();
    let options = mk_options(0.2, 1);
    let (mut requests, mut retries) = (0u64, 0u64);
    for second in 30..40 {
        for _ in 0..50 {
            budget.deposit(mk_second(second));
            requests += 1;
            // Every request fails and asks for two retries.
            retries += (0..2).filter(|_| budget.withdraw(mk_second(second), &options)).count() as u64;
        }
    }
    // Each second: at most the minimum plus the ratio of that second's (or the last one's) requests.
    assert!(
        retries <= 10 + requests / 5,
        "{retries} retries for {requests} requests"
    );
    assert!(retries > 0);
}
