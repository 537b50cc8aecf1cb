//! A worker's pool of HTTP/1 connections, per endpoint: idle connections to reuse, a cap on
//! open ones, and a FIFO queue of requests waiting for one.
//!
//! ```text
//! checkout ─▶ idle, open and fresh? ─▶ Idle(Pooled)          Pooled dropped ─▶ ready? ─▶ next waiter, else idle
//!                 │ no                                        Permit dropped ─▶ next waiter may connect, else open -= 1
//!                 ▼
//!             open < max? ─▶ Connect(Permit) ─▶ caller dials; the connection holds the Permit
//!                 │ no
//!                 ▼
//!             wait in line (up to the wait timeout) for a Pooled or a Permit
//! ```
//!
//! Each worker owns its pool, so the mutex is never contended: it is there because the request
//! futures must be `Send` (hyper's server spawns them), not to share across threads.

use std::{
    collections::{HashMap, VecDeque},
    future::poll_fn,
    hash::Hash,
    ops::{Deref, DerefMut},
    sync::{Arc, Mutex, MutexGuard, Weak},
    task::{Context, Poll, Waker},
    time::Duration,
};

use tokio::{sync::oneshot, time::Instant};

#[cfg(test)]
mod tests;

/// What connections are pooled by (an endpoint, and what else changes the connection).
pub trait PoolKey: Hash + Eq + Clone + Send + 'static {}

impl<T: Hash + Eq + Clone + Send + 'static> PoolKey for T {}

/// What the pool needs of a connection; a trait so tests can pool trivial values.
pub trait Poolable: Send + 'static {
    /// False once the connection can carry no more requests.
    fn is_open(&self) -> bool;
    /// Ready for the next request (the previous response has been read): `Ready(true)`;
    /// closed for good: `Ready(false)`.
    fn poll_reusable(&mut self, cx: &mut Context<'_>) -> Poll<bool>;
    /// Checked before an idle connection is handed out: false when it closed while idle.
    fn check_idle(&mut self) -> bool {
        self.is_open()
    }
}

#[derive(Clone, Copy, Debug)]
pub struct PoolOptions {
    /// Open connections per endpoint, idle or busy. Must be at least 1.
    pub max_per_endpoint: usize,
    /// An idle connection is closed after this.
    pub idle_timeout: Duration,
    /// How long a request waits for a connection when its endpoint is at the cap.
    pub wait_timeout: Duration,
}

pub struct Pool<K: PoolKey, C: Poolable> {
    shared: Arc<Shared<K, C>>,
}

#[derive(Debug, thiserror::Error)]
#[error("no free connection within {0:?}")]
pub struct WaitTimeout(pub Duration);

/// What a checkout gives: a connection to use, or the right to open one.
pub enum Checkout<K: PoolKey, C: Poolable> {
    Idle(Pooled<K, C>),
    Connect(Permit<K, C>),
}

/// A connection out of the pool; dropping it returns it once it is ready again.
pub struct Pooled<K: PoolKey, C: Poolable> {
    /// Always `Some` until dropped. Boxed once, when opened: a checkout, the exchange and the
    /// response body that hold it move a pointer, not the connection's buffers.
    conn: Option<Box<C>>,
    key: K,
    pool: Weak<Shared<K, C>>,
}

/// One open connection counted against its endpoint's cap; dropping it (when the connection
/// closes) frees the place, for the first waiter if there is one.
pub struct Permit<K: PoolKey, C: Poolable> {
    key: K,
    pool: Weak<Shared<K, C>>,
    /// False once the place was accounted for otherwise; see [`Shared::release`].
    armed: bool,
}

struct Shared<K: PoolKey, C: Poolable> {
    options: PoolOptions,
    state: Mutex<State<K, C>>,
}

struct State<K: PoolKey, C: Poolable> {
    /// foldhash, not SipHash: the keys are pod addresses from our own config, and each request
    /// hashes its key twice (checkout, return).
    endpoints: HashMap<K, Slot<K, C>, foldhash::fast::RandomState>,
    reaper_running: bool,
}

struct Slot<K: PoolKey, C: Poolable> {
    /// Most recently used last: reuse takes the warmest.
    idle: Vec<Idle<C>>,
    /// Connections open or being opened. Never above `max_per_endpoint`.
    open: usize,
    waiters: VecDeque<oneshot::Sender<Handoff<K, C>>>,
}

struct Idle<C> {
    conn: Box<C>,
    since: Instant,
}

enum Handoff<K: PoolKey, C: Poolable> {
    Idle(Box<C>),
    Connect(Permit<K, C>),
}

// === impl Pool ===

impl<K: PoolKey, C: Poolable> Clone for Pool<K, C> {
    fn clone(&self) -> Self {
        Pool {
            shared: self.shared.clone(),
        }
    }
}

impl<K, C> Pool<K, C>
where
    K: PoolKey,
    C: Poolable,
{
    pub fn new(options: PoolOptions) -> Self {
        let state = State {
            endpoints: HashMap::default(),
            reaper_running: false,
        };
        Pool {
            shared: Arc::new(Shared {
                options,
                state: Mutex::new(state),
            }),
        }
    }

    /// An idle connection to `key`, or a permit to open one; waits in line when `key` is at
    /// its cap.
    pub async fn checkout(&self, key: &K) -> Result<Checkout<K, C>, WaitTimeout> {
        // Connections found closed are dropped after the lock: dropping one gives its place
        // back, which takes the lock.
        let mut closed = Vec::new();
        let waiting = {
            let mut state = self.shared.lock();
            let slot = state.endpoints.entry(key.clone()).or_insert_with(Slot::new);
            let idle_timeout = self.shared.options.idle_timeout;
            while let Some(mut idle) = slot.idle.pop() {
                if idle.since.elapsed() < idle_timeout && idle.conn.check_idle() {
                    return Ok(Checkout::Idle(self.pooled_boxed(key.clone(), idle.conn)));
                }
                closed.push(idle);
            }
            if slot.open < self.shared.options.max_per_endpoint {
                slot.open += 1;
                return Ok(Checkout::Connect(Permit::new(key.clone(), &self.shared)));
            }
            let (tx, rx) = oneshot::channel();
            // Requests that gave up waiting leave their sender behind; drop those first.
            slot.waiters.retain(|waiter| !waiter.is_closed());
            slot.waiters.push_back(tx);
            rx
        };
        drop(closed);
        let wait = self.shared.options.wait_timeout;
        match tokio::time::timeout(wait, waiting).await {
            Ok(Ok(Handoff::Idle(conn))) => Ok(Checkout::Idle(self.pooled_boxed(key.clone(), conn))),
            Ok(Ok(Handoff::Connect(permit))) => Ok(Checkout::Connect(permit)),
            // The sender went away without an answer: only when the pool itself is gone.
            Ok(Err(_)) | Err(_) => Err(WaitTimeout(wait)),
        }
    }

    /// Wraps a connection just opened with a checkout's permit, so it returns here when done.
    pub fn pooled(&self, key: K, conn: C) -> Pooled<K, C> {
        self.pooled_boxed(key, Box::new(conn))
    }

    fn pooled_boxed(&self, key: K, conn: Box<C>) -> Pooled<K, C> {
        Pooled {
            conn: Some(conn),
            key,
            pool: Arc::downgrade(&self.shared),
        }
    }

    /// Idle connections to `key` right now.
    #[cfg(test)]
    pub fn idle(&self, key: &K) -> usize {
        self.shared.lock().endpoints.get(key).map_or(0, |slot| slot.idle.len())
    }

    /// Connections open to `key` right now (idle, busy or being opened).
    pub fn open(&self, key: &K) -> usize {
        self.shared.lock().endpoints.get(key).map_or(0, |slot| slot.open)
    }
}

// === impl Shared ===

impl<K, C> Shared<K, C>
where
    K: PoolKey,
    C: Poolable,
{
    fn lock(&self) -> MutexGuard<'_, State<K, C>> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A ready connection comes back: to the first waiter, else to the idle list.
    fn put(self: &Arc<Self>, key: K, conn: Box<C>) {
        let mut state = self.lock();
        let start_reaper = !state.reaper_running;
        let Some(slot) = state.endpoints.get_mut(&key) else {
            return;
        };
        let Some(Handoff::Idle(conn)) = slot.hand_off(Handoff::Idle(conn)) else {
            return;
        };
        slot.idle.push(Idle {
            conn,
            since: Instant::now(),
        });
        if start_reaper && let Ok(runtime) = tokio::runtime::Handle::try_current() {
            state.reaper_running = true;
            runtime.spawn(reap(Arc::downgrade(self)));
        }
    }

    /// A connection closed: its place goes to the first waiter (who then connects), else it is freed.
    fn release(self: &Arc<Self>, key: &K) {
        let mut state = self.lock();
        let Some(slot) = state.endpoints.get_mut(key) else {
            return;
        };
        let unused = slot.hand_off(Handoff::Connect(Permit::new(key.clone(), self)));
        if let Some(Handoff::Connect(mut permit)) = unused {
            permit.armed = false;
            slot.open -= 1;
            if slot.is_unused() {
                state.endpoints.remove(key);
            }
        }
    }

    /// Closes idle connections past the idle timeout; true while any idle connection is left.
    fn expire_idle(&self) -> bool {
        let timeout = self.options.idle_timeout;
        // Dropped after the lock: a connection's drop may wake its task, which takes the lock.
        let mut expired = Vec::new();
        let mut state = self.lock();
        for slot in state.endpoints.values_mut() {
            let (keep, old): (Vec<_>, Vec<_>) = slot
                .idle
                .drain(..)
                .partition(|idle| idle.conn.is_open() && idle.since.elapsed() < timeout);
            slot.idle = keep;
            expired.extend(old);
        }
        let any_left = state.endpoints.values().any(|slot| !slot.idle.is_empty());
        if !any_left {
            state.reaper_running = false;
        }
        drop(state);
        drop(expired);
        any_left
    }
}

/// Runs while the pool has idle connections, closing the expired ones; `put` restarts it.
async fn reap<K, C>(pool: Weak<Shared<K, C>>)
where
    K: PoolKey,
    C: Poolable,
{
    loop {
        let Some(period) = pool.upgrade().map(|shared| shared.options.idle_timeout / 2) else {
            return;
        };
        tokio::time::sleep(period.max(Duration::from_millis(10))).await;
        let Some(shared) = pool.upgrade() else {
            return;
        };
        if !shared.expire_idle() {
            return;
        }
    }
}

// === impl Slot ===

impl<K: PoolKey, C: Poolable> Slot<K, C> {
    fn new() -> Self {
        Slot {
            idle: Vec::new(),
            open: 0,
            waiters: VecDeque::new(),
        }
    }

    /// Gives `handoff` to the longest waiting request still there; returns it if none took it.
    fn hand_off(&mut self, mut handoff: Handoff<K, C>) -> Option<Handoff<K, C>> {
        while let Some(waiter) = self.waiters.pop_front() {
            match waiter.send(handoff) {
                Ok(()) => return None,
                Err(unsent) => handoff = unsent,
            }
        }
        Some(handoff)
    }

    fn is_unused(&self) -> bool {
        self.open == 0 && self.idle.is_empty() && self.waiters.is_empty()
    }
}

// === impl Pooled ===

impl<K: PoolKey, C: Poolable> Pooled<K, C> {
    /// Takes the connection out of the pool for good (an upgrade); what it holds goes with it.
    pub fn detach(mut self) -> C {
        *self.conn.take().expect("a pooled connection is only taken once")
    }
}

impl<K: PoolKey, C: Poolable> Deref for Pooled<K, C> {
    type Target = C;

    fn deref(&self) -> &C {
        self.conn.as_deref().expect("a pooled connection is only taken in drop")
    }
}

impl<K: PoolKey, C: Poolable> DerefMut for Pooled<K, C> {
    fn deref_mut(&mut self) -> &mut C {
        self.conn
            .as_deref_mut()
            .expect("a pooled connection is only taken in drop")
    }
}

impl<K: PoolKey, C: Poolable> Drop for Pooled<K, C> {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        let Some(shared) = self.pool.upgrade() else {
            return;
        };
        if !conn.is_open() {
            return;
        }
        // Usually the response was read to its end and the connection is ready right away.
        match conn.poll_reusable(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(true) => shared.put(self.key.clone(), conn),
            Poll::Ready(false) => {}
            Poll::Pending => {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                let (key, pool) = (self.key.clone(), self.pool.clone());
                // Bounded: a connection not ready within the idle timeout is closed (dropped).
                let limit = shared.options.idle_timeout;
                runtime.spawn(async move {
                    let ready = tokio::time::timeout(limit, poll_fn(|cx| conn.poll_reusable(cx))).await;
                    if let (Ok(true), Some(shared)) = (ready, pool.upgrade()) {
                        shared.put(key, conn);
                    }
                });
            }
        }
    }
}

// === impl Permit ===

impl<K: PoolKey, C: Poolable> Permit<K, C> {
    fn new(key: K, shared: &Arc<Shared<K, C>>) -> Self {
        Permit {
            key,
            pool: Arc::downgrade(shared),
            armed: true,
        }
    }
}

impl<K: PoolKey, C: Poolable> Drop for Permit<K, C> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Some(shared) = self.pool.upgrade() {
            shared.release(&self.key);
        }
    }
}
