use std::{
    future::poll_fn,
    sync::atomic::{AtomicUsize, Ordering},
    task::{Wake, Waker},
};

use hyper::rt::Executor;

use super::*;

/// Counts its wake-ups.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn mk_waker() -> (Arc<CountingWaker>, Waker) {
    let counter = Arc::new(CountingWaker::default());
    (counter.clone(), Waker::from(counter))
}

/// One poll of `streams` driving `connection`, as the connection's task does.
fn poll_drive<C: Future>(streams: &mut Streams, connection: Pin<&mut C>, cx: &mut Context<'_>) -> Poll<C::Output> {
    Pin::new(&mut streams.drive(connection)).poll(cx)
}

/// A stream that records that it ran, then finishes.
fn mk_stream(ran: &Arc<AtomicUsize>) -> impl Future<Output = ()> + Send + 'static {
    let ran = ran.clone();
    async move {
        ran.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_stream_spawned_by_the_connection_runs_in_the_same_poll_without_a_wake_up() {
    let (exec, mut streams) = streams();
    let ran = Arc::new(AtomicUsize::new(0));
    let mut spawned = false;
    let connection = poll_fn(|_| {
        if !spawned {
            spawned = true;
            exec.execute(mk_stream(&ran));
        }
        Poll::<()>::Pending
    });
    let mut connection = std::pin::pin!(connection);
    let (wakes, waker) = mk_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    assert_eq!(ran.load(Ordering::Relaxed), 1, "the stream ran");
    assert_eq!(streams.len(), 0, "and finished");
    assert_eq!(wakes.0.load(Ordering::Relaxed), 0, "no wake-up was needed");
}

#[test]
fn a_stream_spawned_by_a_stream_runs_in_the_same_poll() {
    let (exec, mut streams) = streams();
    let ran = Arc::new(AtomicUsize::new(0));
    let inner = exec.clone();
    let spawn_more = {
        let ran = ran.clone();
        async move { inner.execute(mk_stream(&ran)) }
    };
    exec.execute(spawn_more);
    let mut connection = std::pin::pin!(std::future::pending::<()>());
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    assert_eq!(ran.load(Ordering::Relaxed), 1);
    assert_eq!(streams.len(), 0);
}

#[test]
fn a_spawn_from_outside_the_poll_wakes_the_connection_task() {
    let (exec, mut streams) = streams();
    let mut connection = std::pin::pin!(std::future::pending::<()>());
    let (wakes, waker) = mk_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    let ran = Arc::new(AtomicUsize::new(0));
    exec.execute(mk_stream(&ran));
    assert_eq!(wakes.0.load(Ordering::Relaxed), 1, "woken for the new stream");
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    assert_eq!(ran.load(Ordering::Relaxed), 1);
}

#[test]
fn a_woken_stream_is_polled_again_and_a_pending_one_is_kept() {
    let (exec, mut streams) = streams();
    let notify = Arc::new(tokio::sync::Notify::new());
    let ran = Arc::new(AtomicUsize::new(0));
    exec.execute({
        let (notify, ran) = (notify.clone(), ran.clone());
        async move {
            notify.notified().await;
            ran.fetch_add(1, Ordering::Relaxed);
        }
    });
    let mut connection = std::pin::pin!(std::future::pending::<()>());
    let (wakes, waker) = mk_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    assert_eq!(streams.len(), 1, "still waiting");
    notify.notify_one();
    assert_eq!(wakes.0.load(Ordering::Relaxed), 1, "the stream's wake reaches the task");
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    assert_eq!(ran.load(Ordering::Relaxed), 1);
    assert_eq!(streams.len(), 0);
}

#[test]
fn the_driven_future_is_ready_with_the_connection_output() {
    let (_exec, mut streams) = streams();
    let mut connection = std::pin::pin!(async { 7 });
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    assert_eq!(poll_drive(&mut streams, connection.as_mut(), &mut cx), Poll::Ready(7));
}

#[test]
fn a_connection_that_spawns_on_every_poll_yields_after_a_bounded_number_of_rounds() {
    let (exec, mut streams) = streams();
    let ran = Arc::new(AtomicUsize::new(0));
    let connection = poll_fn(|cx| {
        exec.execute(mk_stream(&ran));
        cx.waker().wake_by_ref();
        Poll::<()>::Pending
    });
    let mut connection = std::pin::pin!(connection);
    let (wakes, waker) = mk_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    assert_eq!(
        ran.load(Ordering::Relaxed),
        ROUNDS - 1,
        "each round ran the last round's stream"
    );
    assert!(wakes.0.load(Ordering::Relaxed) >= 1, "it asked to be polled again");
}

#[test]
fn a_queued_stream_that_holds_the_executor_is_dropped_with_the_set() {
    let (exec, streams) = streams();
    let dropped = Arc::new(AtomicUsize::new(0));
    let guard = Guard(dropped.clone());
    let held = exec.clone();
    exec.execute(async move {
        let _keep = (guard, held);
    });
    drop(exec);
    drop(streams);
    assert_eq!(dropped.load(Ordering::Relaxed), 1, "no cycle through the queue");
}

struct Guard(Arc<AtomicUsize>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn streams_end_with_their_set() {
    let (exec, streams) = streams();
    let dropped = Arc::new(AtomicUsize::new(0));
    let guard = Guard(dropped.clone());
    exec.execute(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    drop(streams);
    drop(exec);
    assert_eq!(dropped.load(Ordering::Relaxed), 1);
}

#[test]
fn the_connection_is_polled_again_only_after_its_own_waker_fired() {
    let (_exec, mut streams) = streams();
    let polls = Arc::new(AtomicUsize::new(0));
    let slot: Arc<Mutex<Option<Waker>>> = Arc::default();
    let connection = poll_fn(|cx| {
        polls.fetch_add(1, Ordering::Relaxed);
        *slot.lock().expect("slot") = Some(cx.waker().clone());
        Poll::<()>::Pending
    });
    let mut connection = std::pin::pin!(connection);
    let (wakes, waker) = mk_waker();
    let mut cx = Context::from_waker(&waker);
    let mut driven = streams.drive(connection.as_mut());
    for _ in 0..3 {
        assert!(Pin::new(&mut driven).poll(&mut cx).is_pending());
    }
    assert_eq!(polls.load(Ordering::Relaxed), 1, "polled once, then not until woken");
    let connection_waker = slot.lock().expect("slot").take().expect("registered");
    connection_waker.wake();
    assert_eq!(wakes.0.load(Ordering::Relaxed), 1, "its wake reaches the task");
    assert!(Pin::new(&mut driven).poll(&mut cx).is_pending());
    assert_eq!(polls.load(Ordering::Relaxed), 2);
}

#[test]
fn a_new_drive_polls_the_connection_even_unwoken() {
    let (_exec, mut streams) = streams();
    let polls = Arc::new(AtomicUsize::new(0));
    let connection = poll_fn(|_| {
        polls.fetch_add(1, Ordering::Relaxed);
        Poll::<()>::Pending
    });
    let mut connection = std::pin::pin!(connection);
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    for _ in 0..2 {
        // As after a graceful shutdown, which changes the connection without waking it.
        assert!(poll_drive(&mut streams, connection.as_mut(), &mut cx).is_pending());
    }
    assert_eq!(polls.load(Ordering::Relaxed), 2);
}
