use std::{future::pending, time::Duration};

use super::*;

/// Upper bound for "done within": far above every timeout here, so only a hang trips it.
const BOUND: Duration = Duration::from_secs(10);

#[tokio::test]
async fn an_exchange_that_answers_in_time_gives_its_output_and_leaves_its_timer_for_the_next() {
    let deadlines = Deadlines::default();
    assert_eq!(deadlines.run(Duration::from_secs(60), async { 7 }).await, Ok(7));
    assert_eq!(deadlines.spare(), 1);
    // The next request takes that timer instead of making one.
    let during = deadlines
        .run(Duration::from_secs(60), async { deadlines.spare() })
        .await;
    assert_eq!(during, Ok(0));
    assert_eq!(deadlines.spare(), 1);
}

#[tokio::test]
async fn an_exchange_slower_than_the_timeout_is_cut_off() {
    let deadlines = Deadlines::default();
    let run = deadlines.run(Duration::from_millis(20), pending::<()>());
    let outcome = tokio::time::timeout(BOUND, run).await.expect("the timeout fired");
    assert_eq!(outcome, Err(Elapsed));
    assert_eq!(deadlines.spare(), 1);
}

#[tokio::test]
async fn a_reused_timer_is_cut_off_at_the_new_deadline_not_at_the_old_one() {
    let deadlines = Deadlines::default();
    let timeout = Duration::from_millis(300);
    deadlines.run(timeout, async {}).await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    // The reused timer's old deadline passes 150 ms into this run, its new one at 300 ms.
    let slow = deadlines.run(timeout, tokio::time::sleep(Duration::from_millis(240)));
    let outcome = tokio::time::timeout(BOUND, slow).await.expect("the run ended");
    assert_eq!(outcome, Ok(()));
    // And the new deadline holds: a reused timer still cuts off an exchange that never answers.
    let stuck = deadlines.run(Duration::from_millis(20), pending::<()>());
    let outcome = tokio::time::timeout(BOUND, stuck).await.expect("the timeout fired");
    assert_eq!(outcome, Err(Elapsed));
}

#[tokio::test]
async fn a_dropped_exchange_returns_its_timer_too() {
    let deadlines = Deadlines::default();
    let run = deadlines.run(Duration::from_secs(60), pending::<()>());
    // Polled once (the timer is lent and registered), then dropped as hyper drops a request
    // whose client went away.
    assert!(tokio::time::timeout(Duration::from_millis(10), run).await.is_err());
    assert_eq!(deadlines.spare(), 1);
}

#[tokio::test]
async fn the_spare_timers_stop_at_their_cap() {
    let deadlines = Deadlines::default();
    let runs = (0..MAX_SPARE + 5).map(|_| deadlines.run(Duration::from_secs(60), tokio::task::yield_now()));
    let outcomes = futures::future::join_all(runs).await;
    assert!(outcomes.iter().all(Result::is_ok));
    assert_eq!(deadlines.spare(), MAX_SPARE);
}
