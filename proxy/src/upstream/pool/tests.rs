use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use super::*;

const KEY: &str = "10.0.0.1:8080";

/// A connection that is ready whenever it is open; `closed` flips it, `dropped` tells when the
/// pool let go of it.
struct MkConn {
    id: usize,
    closed: Arc<AtomicBool>,
    dropped: Arc<AtomicBool>,
}

impl Poolable for MkConn {
    fn is_open(&self) -> bool {
        !self.closed.load(Ordering::Relaxed)
    }

    fn poll_reusable(&mut self, _cx: &mut Context<'_>) -> Poll<bool> {
        Poll::Ready(self.is_open())
    }
}

impl Drop for MkConn {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}

fn mk_conn(id: usize) -> MkConn {
    MkConn {
        id,
        closed: Arc::default(),
        dropped: Arc::default(),
    }
}

fn mk_pool(max_per_endpoint: usize) -> Pool<&'static str, MkConn> {
    Pool::new(PoolOptions {
        max_per_endpoint,
        idle_timeout: Duration::from_secs(4),
        wait_timeout: Duration::from_secs(1),
    })
}

async fn connect(pool: &Pool<&'static str, MkConn>) -> Permit<&'static str, MkConn> {
    match pool.checkout(&KEY).await.expect("below the cap") {
        Checkout::Connect(permit) => permit,
        Checkout::Idle(conn) => panic!("expected a permit, got idle connection {}", conn.id),
    }
}

async fn reuse(pool: &Pool<&'static str, MkConn>) -> Pooled<&'static str, MkConn> {
    match pool.checkout(&KEY).await.expect("below the cap") {
        Checkout::Idle(conn) => conn,
        Checkout::Connect(_) => panic!("expected an idle connection, got a permit"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_returned_connection_is_reused_instead_of_opening_another() {
    let pool = mk_pool(4);
    let _permit = connect(&pool).await;
    drop(pool.pooled(KEY, mk_conn(7)));
    assert_eq!(pool.idle(&KEY), 1);
    let conn = reuse(&pool).await;
    assert_eq!(conn.id, 7);
    assert_eq!(pool.open(&KEY), 1);
}

#[tokio::test(start_paused = true)]
async fn at_the_cap_requests_wait_and_are_served_first_come_first_served() {
    let pool = mk_pool(2);
    let _permits = (connect(&pool).await, connect(&pool).await);
    assert_eq!(pool.open(&KEY), 2);

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for waiter in 0..3 {
        let (pool, tx) = (pool.clone(), tx.clone());
        tokio::spawn(async move {
            let Ok(Checkout::Idle(conn)) = pool.checkout(&KEY).await else {
                panic!("waiter {waiter} got no connection");
            };
            tx.send((waiter, conn.id)).expect("the test listens");
            // Hold it a moment, then give it back for the next waiter.
            tokio::time::sleep(Duration::from_millis(10)).await;
        });
        // Queue them in a known order.
        tokio::task::yield_now().await;
    }
    assert_eq!(pool.open(&KEY), 2, "waiting requests open nothing");
    drop(pool.pooled(KEY, mk_conn(1)));
    let mut served = Vec::new();
    for _ in 0..3 {
        served.push(rx.recv().await.expect("every waiter is served"));
    }
    assert_eq!(served, vec![(0, 1), (1, 1), (2, 1)]);
}

#[tokio::test(start_paused = true)]
async fn a_request_that_finds_no_free_connection_in_time_gets_an_error() {
    let pool = mk_pool(1);
    let _permit = connect(&pool).await;
    let started = Instant::now();
    let Err(WaitTimeout(waited)) = pool.checkout(&KEY).await else {
        panic!("the endpoint is at its cap");
    };
    assert_eq!(waited, Duration::from_secs(1));
    assert_eq!(started.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_closed_connection_frees_its_place_for_the_first_waiter() {
    let pool = mk_pool(1);
    let permit = connect(&pool).await;
    let waiter = tokio::spawn({
        let pool = pool.clone();
        async move { matches!(pool.checkout(&KEY).await, Ok(Checkout::Connect(_))) }
    });
    tokio::task::yield_now().await;
    drop(permit);
    assert!(waiter.await.expect("no panic"), "the waiter may open a connection");
    assert_eq!(pool.open(&KEY), 0, "its permit was dropped with the task");
}

#[tokio::test(start_paused = true)]
async fn idle_connections_are_closed_after_the_idle_timeout() {
    let pool = mk_pool(4);
    let _permit = connect(&pool).await;
    let conn = mk_conn(1);
    let dropped = conn.dropped.clone();
    drop(pool.pooled(KEY, conn));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!dropped.load(Ordering::Relaxed), "still within the idle timeout");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(dropped.load(Ordering::Relaxed), "closed by the reaper");
    assert_eq!(pool.idle(&KEY), 0);
}

#[tokio::test(start_paused = true)]
async fn a_connection_closed_while_idle_is_not_reused() {
    let pool = mk_pool(4);
    let _permit = connect(&pool).await;
    let conn = mk_conn(1);
    let closed = conn.closed.clone();
    drop(pool.pooled(KEY, conn));
    closed.store(true, Ordering::Relaxed);
    let _second = connect(&pool).await;
    assert_eq!(pool.idle(&KEY), 0);
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_is_not_reusable_is_not_returned() {
    let pool = mk_pool(4);
    let _permit = connect(&pool).await;
    let conn = mk_conn(1);
    conn.closed.store(true, Ordering::Relaxed);
    let dropped = conn.dropped.clone();
    drop(pool.pooled(KEY, conn));
    assert!(dropped.load(Ordering::Relaxed));
    assert_eq!(pool.idle(&KEY), 0);
}

#[tokio::test(start_paused = true)]
async fn endpoints_have_separate_caps() {
    let pool = mk_pool(1);
    let _permit = connect(&pool).await;
    assert!(matches!(
        pool.checkout(&"10.0.0.2:8080").await,
        Ok(Checkout::Connect(_))
    ));
}
