//! A future that shares a task but is polled only after it asked to be woken.
//!
//! A connection's task polls hyper's connection and, beside it, the watchdog and the drain
//! signal. Those fire rarely, yet a plain `select!` polls them on every wake-up of the task,
//! several times per request. Behind a [`Gated`] they cost an atomic swap until their own
//! waker fires.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
};

use futures::task::AtomicWaker;

pub(super) struct Gated<'a, T> {
    inner: Pin<Box<dyn Future<Output = T> + Send + 'a>>,
    signal: Arc<Signal>,
    /// Wakes `signal`; made once, handed to every poll of `inner`.
    waker: Waker,
}

struct Signal {
    woken: AtomicBool,
    /// The task polling the [`Gated`].
    task: AtomicWaker,
}

impl<'a, T> Gated<'a, T> {
    pub(super) fn new(inner: impl Future<Output = T> + Send + 'a) -> Self {
        let signal = Arc::new(Signal {
            // The first poll always reaches `inner`, so it can register its wakers.
            woken: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        Gated {
            inner: Box::pin(inner),
            waker: Waker::from(signal.clone()),
            signal,
        }
    }
}

impl<T> Future for Gated<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        // Registered before the check, so a wake in between is not lost.
        this.signal.task.register(cx.waker());
        if !this.signal.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        this.inner.as_mut().poll(&mut Context::from_waker(&this.waker))
    }
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use tokio::sync::Notify;

    use super::*;

    #[tokio::test]
    async fn the_inner_future_is_polled_once_then_only_after_its_wake() {
        let polls = Arc::new(AtomicUsize::new(0));
        let notify = Arc::new(Notify::new());
        let mut gated = Gated::new({
            let (polls, notify) = (polls.clone(), notify.clone());
            async move {
                let notified = notify.notified();
                tokio::pin!(notified);
                std::future::poll_fn(|cx| {
                    polls.fetch_add(1, Ordering::Relaxed);
                    notified.as_mut().poll(cx)
                })
                .await;
                7
            }
        });
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        for _ in 0..5 {
            assert!(Pin::new(&mut gated).poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 1, "polled only on the first poll");
        notify.notify_one();
        assert_eq!(Pin::new(&mut gated).poll(&mut cx), Poll::Ready(7));
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_gated_timer_still_wakes_its_task() {
        let started = tokio::time::Instant::now();
        Gated::new(tokio::time::sleep(std::time::Duration::from_secs(5))).await;
        assert_eq!(started.elapsed(), std::time::Duration::from_secs(5));
    }
}
