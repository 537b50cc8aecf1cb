//! HTTP/2 streams polled by their connection's task instead of one tokio task each.
//!
//! hyper's HTTP/2 server hands every accepted stream (and an h2 CONNECT tunnel's send half) to
//! its executor. With tokio's, each stream is a task: an allocation, a spawn into the runtime's
//! task list, a scheduler hop to first poll it, and one more wake-up of the connection task to
//! write what the stream produced. Here the streams go into a `FuturesUnordered` that the
//! connection's own task polls right before hyper's connection, so a response is framed and
//! written in the same poll that produced it. The connection itself is polled only when its own
//! waker fired (its socket, its timers, or a stream that queued frames), not on every wake-up of
//! the task: a stream waking for its upstream response costs no HTTP/2 session poll of its own.
//!
//! ```text
//! hyper Server::poll / H2Stream::poll ─execute─▶ StreamExec queue ─adopt─▶ Streams
//!        ▲                                                                   │
//!        └─── Driven::poll: streams, then the connection, again while queued ◀┘
//! ```
//!
//! The streams end with their connection's task: once hyper's connection future is done, its
//! HTTP/2 session is gone and a stream could not write its response anyway.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
};

use futures::{StreamExt, future::BoxFuture, stream::FuturesUnordered, task::AtomicWaker};

/// After this many rounds of "streams, then connection" in one poll, the task yields (waking
/// itself) so one busy connection cannot hold its worker.
const ROUNDS: usize = 8;

/// hyper's executor for one connection: queues what hyper spawns for [`Streams`] to run.
#[derive(Clone)]
pub(super) struct StreamExec {
    shared: Arc<Shared>,
}

struct Shared {
    /// Spawned, not yet adopted by [`Streams`]. At most `max_concurrent_streams` streams plus
    /// their tunnels' send halves are alive at once: hyper refuses further streams.
    queued: Mutex<Vec<BoxFuture<'static, ()>>>,
    /// `queued` is not empty; read without the lock, so an HTTP/1.1 connection (which never
    /// spawns) pays a load per poll, not a lock. Written under the lock.
    has_queued: AtomicBool,
    /// Set while [`Driven`] polls: it adopts the queue before it returns, no wake needed.
    driving: AtomicBool,
    /// The connection's task, for a spawn from outside its poll and for `connection_woken`.
    task: AtomicWaker,
    /// The waker hyper's connection was last polled with has fired since (or it was never
    /// polled). Everything that lets the connection progress wakes it: its I/O and timers
    /// register it, and h2 wakes it when a stream queues frames.
    connection_woken: AtomicBool,
}

/// The running streams of one connection.
pub(super) struct Streams {
    shared: Arc<Shared>,
    running: FuturesUnordered<BoxFuture<'static, ()>>,
    /// Sets `connection_woken`, then wakes the task; what hyper's connection is polled with.
    connection_waker: Waker,
}

/// A connection future driven together with its streams; ready when the connection is.
pub(super) struct Driven<'a, C: ?Sized> {
    connection: Pin<&'a mut C>,
    streams: &'a mut Streams,
    shared: Arc<Shared>,
}

// === impl StreamExec ===

/// An executor and the stream set it feeds.
pub(super) fn streams() -> (StreamExec, Streams) {
    let shared = Arc::new(Shared {
        queued: Mutex::new(Vec::new()),
        has_queued: AtomicBool::new(false),
        driving: AtomicBool::new(false),
        task: AtomicWaker::new(),
        connection_woken: AtomicBool::new(true),
    });
    let mut running = FuturesUnordered::new();
    // `FuturesUnordered` wakes its task again whenever one call has polled as many futures as
    // it holds (to not starve other tasks when futures wake each other in a loop): with one
    // stream in flight, that is every poll, and each costs this connection a spare turn.
    // A member that is never woken keeps "polled all" from ever being true; fairness is kept
    // by `ROUNDS` and tokio's per-task budget.
    running.push(Box::pin(std::future::pending()) as BoxFuture<'static, ()>);
    // Polled once here, where the spare wake-up (it is alone) goes nowhere.
    let _ = running.poll_next_unpin(&mut Context::from_waker(Waker::noop()));
    let streams = Streams {
        connection_waker: Waker::from(shared.clone()),
        shared: shared.clone(),
        running,
    };
    (StreamExec { shared }, streams)
}

impl<F> hyper::rt::Executor<F> for StreamExec
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, future: F) {
        {
            let mut queued = self.shared.lock();
            queued.push(Box::pin(future));
            self.shared.has_queued.store(true, Ordering::SeqCst);
        }
        // hyper spawns from inside the connection's or a stream's poll, where `Driven` adopts
        // the queue before returning; anything else wakes the task. SeqCst with the stores in
        // `Driven::poll`: either it sees `has_queued` after lowering `driving`, or this sees
        // `driving` down and wakes.
        if !self.shared.driving.load(Ordering::SeqCst) {
            self.shared.task.wake();
        }
    }
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.connection_woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<BoxFuture<'static, ()>>> {
        // A panic while pushing leaves a valid Vec; nothing to repair.
        self.queued.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

// === impl Streams ===

impl Streams {
    /// Polls `connection` with these streams until it is done.
    /// Its first poll polls the connection, woken or not (a graceful shutdown needs a poll).
    pub(super) fn drive<'a, C: Future + ?Sized>(&'a mut self, connection: Pin<&'a mut C>) -> Driven<'a, C> {
        self.shared.connection_woken.store(true, Ordering::Release);
        Driven {
            connection,
            shared: self.shared.clone(),
            streams: self,
        }
    }

    /// Moves spawned streams into the running set; whether there were any.
    fn adopt(&mut self) -> bool {
        if !self.shared.has_queued.load(Ordering::SeqCst) {
            return false;
        }
        let mut queued = self.shared.lock();
        self.shared.has_queued.store(false, Ordering::SeqCst);
        if queued.is_empty() {
            return false;
        }
        for future in queued.drain(..) {
            self.running.push(future);
        }
        true
    }

    /// Polls the streams that were woken (and the new ones) until none is ready.
    fn poll_running(&mut self, cx: &mut Context<'_>) {
        self.adopt();
        // Only the never-woken member (see `streams()`): nothing to poll.
        if self.running.len() == 1 {
            return;
        }
        // Ends: each Ready(Some) is one stream finished, and the set only shrinks here (it is
        // never empty, see `streams()`, so never Ready(None)).
        while let Poll::Ready(Some(())) = self.running.poll_next_unpin(cx) {}
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.running.len() - 1 + self.shared.lock().len()
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        // A queued stream may hold a `StreamExec` (hyper's streams keep their executor for
        // upgrades), which holds the queue: a cycle that would leak it. Dropped outside the lock.
        let queued = std::mem::take(&mut *self.shared.lock());
        drop(queued);
    }
}

// === impl Driven ===

impl<C: Future + ?Sized> Future for Driven<'_, C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = self.get_mut();
        this.shared.task.register(cx.waker());
        this.shared.driving.store(true, Ordering::SeqCst);
        let polled = this.poll_rounds(cx);
        this.shared.driving.store(false, Ordering::SeqCst);
        // A spawn between the last adoption and the flag going down would wait for no one.
        if polled.is_pending() && this.shared.has_queued.load(Ordering::SeqCst) {
            cx.waker().wake_by_ref();
        }
        polled
    }
}

impl<C: Future + ?Sized> Driven<'_, C> {
    fn poll_rounds(&mut self, cx: &mut Context<'_>) -> Poll<C::Output> {
        for _ in 0..ROUNDS {
            // Streams first: what they send is written by the connection's poll right after.
            self.streams.poll_running(cx);
            if self.shared.connection_woken.swap(false, Ordering::AcqRel) {
                let mut connection_cx = Context::from_waker(&self.streams.connection_waker);
                if let Poll::Ready(output) = self.connection.as_mut().poll(&mut connection_cx) {
                    return Poll::Ready(output);
                }
            }
            // New streams accepted by that poll get their first poll now, not a wake-up later.
            if !self.streams.adopt() {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests;
