//! A pooled HTTP/1.1 connection to a pod, driven by whoever holds it instead of a task of its own.
//!
//! hyper splits a client connection into a sender and a future that does the connection's I/O.
//! A task per connection polling that future cost every request a hop between tasks (a wake-up,
//! a schedule, a second task poll) on top of hyper's own hand-over. Here the holder polls it:
//!
//! ```text
//! checkout ─▶ woken while idle? poll once: did the pod close it? ─▶ closed: dropped, another is used
//! send     ─▶ poll the connection (writes the request, reads the head), then the response future
//! body     ─▶ poll the body; nothing yet: poll the connection, then the body again
//! return   ─▶ ready for another request? ─▶ idle in the pool (the reaper polls it too)
//! 101      ─▶ the connection goes to a task of its own, which hands its socket to the upgrade
//! ```
//!
//! The response future and the body are polled with a no-op waker: only the connection moves
//! them, and it is polled right before them with the task's waker. Registered with them as well,
//! the task would be woken by its own progress (hyper answering the response future inside the
//! connection's poll), and polled again for nothing. For the same reason the connection gets a
//! waker of its own that forwards to the task's ([`Relay`]) and is muted while the body is read:
//! taking a chunk wakes the connection ("room for the next one"), which is this very task, and
//! every later read of the body polls the connection anyway.

use std::{
    future::poll_fn,
    net::SocketAddr,
    pin::{Pin, pin},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Wake, Waker, ready},
};

use futures::task::AtomicWaker;

use http::{Request, Response};
use hyper::{
    body::{Frame, Incoming},
    client::conn::http1::SendRequest,
};
use tracing::debug;

use super::{client::PoolKey, connect::OpenConnection, pool::Permit, pool::Poolable};
use crate::body::RequestBody;

/// hyper's connection future (with upgrades), boxed: its type cannot be named, and boxed once
/// per connection it is never moved as the connection goes in and out of the pool.
pub type Driver = Pin<Box<dyn Future<Output = hyper::Result<()>> + Send>>;

/// An open HTTP/1.1 connection: the sender, and the connection's future with what it holds.
pub struct Http1 {
    sender: SendRequest<RequestBody>,
    /// Boxed: this moves in and out of the pool and into each response body.
    conn: Box<Driven>,
}

/// hyper's connection future and what goes with it while the connection is open.
struct Driven {
    /// `None` once the connection finished: closed, failed, or handed to an upgrade.
    driver: Option<Driver>,
    addr: SocketAddr,
    /// What the connection wakes: the task that polled it last, unless muted.
    relay: Arc<Relay>,
    /// Wakes `relay`; made once, handed to every poll of the connection.
    waker: Waker,
    /// The pool place and the open-connection gauge, both given back when this is dropped.
    _hold: (Permit<PoolKey, Http1>, OpenConnection),
}

// === impl Http1 ===

impl Http1 {
    pub fn new(
        sender: SendRequest<RequestBody>,
        driver: Driver,
        addr: SocketAddr,
        hold: (Permit<PoolKey, Http1>, OpenConnection),
    ) -> Self {
        let relay = Arc::new(Relay {
            task: AtomicWaker::new(),
            muted: AtomicBool::new(false),
            woken: AtomicBool::new(true),
        });
        let conn = Driven {
            driver: Some(driver),
            addr,
            waker: Waker::from(relay.clone()),
            relay,
            _hold: hold,
        };
        Http1 {
            sender,
            conn: Box::new(conn),
        }
    }

    /// Sends `req` and drives the connection until the response head (or an error) arrives.
    pub async fn send(&mut self, req: Request<RequestBody>) -> hyper::Result<Response<Incoming>> {
        // Unconstrained: polled with a no-op waker, a Pending for tokio's task budget would wake
        // nobody. The connection, polled with the real waker first, still yields to the budget.
        let mut response = pin!(tokio::task::unconstrained(self.sender.send_request(req)));
        let conn = &mut self.conn;
        poll_fn(|cx| {
            let _ = conn.drive(cx);
            response.as_mut().poll(&mut quiet())
        })
        .await
    }

    /// The next frame of a response body read on this connection.
    pub fn poll_body(
        &mut self,
        body: &mut Incoming,
        cx: &mut Context<'_>,
    ) -> Poll<Option<hyper::Result<Frame<bytes::Bytes>>>> {
        if let Poll::Ready(frame) = self.conn.read_body(body) {
            return Poll::Ready(frame);
        }
        let _ = self.conn.drive(cx);
        self.conn.read_body(body)
    }

    /// Ignores the connection's wakes until it is back in the pool ([`Poolable::poll_reusable`]):
    /// for dropping the body, which wakes the connection (this very task) when hyper still holds
    /// its sending end.
    pub fn mute(&self) {
        self.conn.relay.muted.store(true, Ordering::Relaxed);
    }

    /// Drives the connection until it finished, for an upgrade: hyper hands the socket to the
    /// upgrade's future in the poll that ends the connection.
    pub async fn finish(mut self) {
        poll_fn(|cx| self.conn.drive(cx)).await;
    }
}

// === impl Driven ===

impl Driven {
    /// Polls the connection once: reads, writes, hands out responses. Ready once it finished.
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(driver) = self.driver.as_mut() else {
            return Poll::Ready(());
        };
        self.relay.task.register(cx.waker());
        self.relay.woken.store(false, Ordering::Relaxed);
        if let Err(error) = ready!(driver.as_mut().poll(&mut Context::from_waker(&self.waker))) {
            debug!(%error, endpoint = %self.addr, "Upstream connection closed");
        }
        // Dropped now: the socket closes, and the sender sees it.
        self.driver = None;
        Poll::Ready(())
    }

    /// Polls `body` without registering anything: only [`Self::drive`] makes it progress.
    fn read_body(&self, body: &mut Incoming) -> Poll<Option<hyper::Result<Frame<bytes::Bytes>>>> {
        use http_body::Body;
        self.relay.muted.store(true, Ordering::Relaxed);
        let frame = Pin::new(body).poll_frame(&mut quiet());
        self.relay.muted.store(false, Ordering::Relaxed);
        frame
    }
}

impl Poolable for Http1 {
    fn is_open(&mut self) -> bool {
        // Idle, nobody polls it: a close from the pod shows only when it is polled, and there
        // is something to see only if the socket (or a timer) woke it since its last poll.
        if self.conn.relay.woken.load(Ordering::Relaxed) {
            let _ = self.conn.drive(&mut quiet());
        }
        self.conn.driver.is_some() && !self.sender.is_closed()
    }

    fn poll_reusable(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        // Muted while its body was dropped, if it was; from here on its wakes count.
        self.conn.relay.muted.store(false, Ordering::Relaxed);
        if self.conn.driver.is_none() {
            return Poll::Ready(false);
        }
        // Usually the response was read whole, and hyper already asked for the next request.
        let reusable = match self.sender.poll_ready(cx) {
            Poll::Ready(ready) => ready.is_ok(),
            Poll::Pending if self.conn.drive(cx).is_ready() => false,
            Poll::Pending => ready!(self.sender.poll_ready(cx)).is_ok(),
        };
        if reusable {
            // Idle, it wakes nobody: the next user polls it anyway, and a close from the pod
            // shows in `woken` (else it would wake whichever task last used it, for nothing).
            self.conn.relay.task.take();
        }
        Poll::Ready(reusable)
    }
}

/// The connection's waker: wakes the task that polled the connection last, except while muted.
struct Relay {
    task: AtomicWaker,
    /// Set while the body is read: the wake that comes of it is ignored (see the module docs);
    /// whoever reads the body next polls the connection anyway before waiting.
    muted: AtomicBool,
    /// Woken (unmuted) since the connection's last poll: only then can polling it show more.
    woken: AtomicBool,
}

impl Wake for Relay {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.muted.load(Ordering::Relaxed) {
            self.woken.store(true, Ordering::Relaxed);
            self.task.wake();
        }
    }
}

/// A context whose waker wakes nothing; see the module docs for when that is enough.
fn quiet() -> Context<'static> {
    Context::from_waker(Waker::noop())
}
