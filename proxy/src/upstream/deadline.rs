//! The upstream timeout without a timer registration per request.
//!
//! `tokio::time::timeout` makes a new timer per request: inserted into the runtime's timer wheel
//! (under its lock) when first polled, removed again (the lock again) when the response comes
//! first, which it nearly always does. Here a finished request leaves its `Sleep` behind, still
//! in the wheel; the next request moves that deadline later, which tokio does with one atomic
//! store (a `Sleep` reset to a later instant keeps its wheel entry; when the old instant comes,
//! the wheel finds the new one and files the entry there). The timeout itself is unchanged.
//!
//! ```text
//! run ─▶ spare Sleep? ─▶ reset to now + timeout ─▶ race with the exchange ─▶ done: back to the spares
//!            │ none                                                          (with a no-op waker, up to MAX_SPARE)
//!            ▼
//!        new Sleep
//! ```

use std::{
    future::poll_fn,
    pin::{Pin, pin},
    sync::{Mutex, PoisonError},
    task::{Context, Poll, Waker},
    time::Duration,
};

use tokio::time::{Instant, Sleep};

#[cfg(test)]
mod tests;

/// Spare timers kept per worker: more than the requests a worker usually has in flight at once;
/// past it a finished request's timer is dropped as before.
const MAX_SPARE: usize = 1024;

/// One worker's spare upstream timers; the worker's requests share it.
#[derive(Default)]
pub struct Deadlines {
    spare: Mutex<Vec<Pin<Box<Sleep>>>>,
}

/// The exchange took longer than the timeout.
#[derive(Debug, PartialEq, Eq)]
pub struct Elapsed;

/// A timer out of the spares, going back when the request is done (or dropped).
struct Lent<'a> {
    sleep: Option<Pin<Box<Sleep>>>,
    owner: &'a Deadlines,
}

impl Deadlines {
    /// Runs `exchange` for at most `timeout`, like `tokio::time::timeout`.
    pub async fn run<F: Future>(&self, timeout: Duration, exchange: F) -> Result<F::Output, Elapsed> {
        let mut lent = self.lend(Instant::now() + timeout);
        let mut exchange = pin!(exchange);
        poll_fn(|cx| {
            // The exchange first: a response already there wins over a timer that just fired.
            if let Poll::Ready(output) = exchange.as_mut().poll(cx) {
                return Poll::Ready(Ok(output));
            }
            lent.sleep().poll(cx).map(|()| Err(Elapsed))
        })
        .await
    }

    /// Timers kept for reuse right now.
    pub fn spare(&self) -> usize {
        self.lock().len()
    }

    fn lend(&self, deadline: Instant) -> Lent<'_> {
        let sleep = match self.lock().pop() {
            Some(mut sleep) => {
                sleep.as_mut().reset(deadline);
                sleep
            }
            None => Box::pin(tokio::time::sleep_until(deadline)),
        };
        Lent {
            sleep: Some(sleep),
            owner: self,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pin<Box<Sleep>>>> {
        self.spare.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Lent<'_> {
    fn sleep(&mut self) -> Pin<&mut Sleep> {
        self.sleep
            .as_mut()
            .expect("a lent timer is only taken in drop")
            .as_mut()
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let Some(mut sleep) = self.sleep.take() else {
            return;
        };
        // Forget the finished request's task: a spare that fires while unused wakes nobody,
        // and holds no task alive.
        let _ = sleep.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        let mut spare = self.owner.lock();
        if spare.len() < MAX_SPARE {
            spare.push(sleep);
        }
    }
}
