//! A pooled HTTP/1.1 connection to a pod, driven by whoever holds it instead of a task of its own.
//!
//! hyper splits a client connection into a sender and a future that does the connection's I/O.
//! A task per connection polling that future cost every request a hop between tasks (a wake-up,
//! a schedule, a second task poll) on top of hyper's own hand-over. Here the holder polls it:
//!
//! ```text
//! checkout ─▶ poll once: did the pod close it while idle? ─▶ closed: dropped, another is used
//! send     ─▶ poll the connection (writes the request, reads the head), then the response future
//! body     ─▶ poll the body; nothing yet: poll the connection, then the body again
//! return   ─▶ ready for another request? ─▶ idle in the pool (the reaper polls it too)
//! 101      ─▶ the connection goes to a task of its own, which hands its socket to the upgrade
//! ```
//!
//! The response future and the body are polled with a no-op waker: only the connection moves
//! them, and it is polled right before them with the task's waker. Registered with them as well,
//! the task would be woken by its own progress (hyper answering the response future inside the
//! connection's poll), and polled again for nothing.

use std::{
    future::poll_fn,
    net::SocketAddr,
    pin::{Pin, pin},
    task::{Context, Poll, Waker, ready},
};

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

/// An open HTTP/1.1 connection: the sender, the connection's future, and what it holds while open.
pub struct Http1 {
    sender: SendRequest<RequestBody>,
    /// `None` once the connection finished: closed, failed, or handed to an upgrade.
    driver: Option<Driver>,
    addr: SocketAddr,
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
        Http1 {
            sender,
            driver: Some(driver),
            addr,
            _hold: hold,
        }
    }

    /// Sends `req` and drives the connection until the response head (or an error) arrives.
    pub async fn send(&mut self, req: Request<RequestBody>) -> hyper::Result<Response<Incoming>> {
        // Unconstrained: polled with a no-op waker, a Pending for tokio's task budget would wake
        // nobody. The connection, polled with the real waker first, still yields to the budget.
        let mut response = pin!(tokio::task::unconstrained(self.sender.send_request(req)));
        poll_fn(|cx| {
            let _ = self.drive(cx);
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
        use http_body::Body;
        if let Poll::Ready(frame) = Pin::new(&mut *body).poll_frame(&mut quiet()) {
            return Poll::Ready(frame);
        }
        let _ = self.drive(cx);
        Pin::new(body).poll_frame(&mut quiet())
    }

    /// Drives the connection until it finished, for an upgrade: hyper hands the socket to the
    /// upgrade's future in the poll that ends the connection.
    pub async fn finish(mut self) {
        poll_fn(|cx| self.drive(cx)).await;
    }

    /// Polls the connection once: reads, writes, hands out responses. Ready once it finished.
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(driver) = self.driver.as_mut() else {
            return Poll::Ready(());
        };
        if let Err(error) = ready!(driver.as_mut().poll(cx)) {
            debug!(%error, endpoint = %self.addr, "Upstream connection closed");
        }
        // Dropped now: the socket closes, and the sender sees it.
        self.driver = None;
        Poll::Ready(())
    }
}

impl Poolable for Http1 {
    fn is_open(&mut self) -> bool {
        // Idle, nobody polls it: a close from the pod shows only when it is polled.
        let _ = self.drive(&mut quiet());
        self.driver.is_some() && !self.sender.is_closed()
    }

    fn poll_reusable(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        if self.driver.is_none() {
            return Poll::Ready(false);
        }
        // Usually the response was read whole, and hyper already asked for the next request.
        if let Poll::Ready(ready) = self.sender.poll_ready(cx) {
            return Poll::Ready(ready.is_ok());
        }
        if self.drive(cx).is_ready() {
            return Poll::Ready(false);
        }
        self.sender.poll_ready(cx).map(|ready| ready.is_ok())
    }
}

/// A context whose waker wakes nothing; see the module docs for when that is enough.
fn quiet() -> Context<'static> {
    Context::from_waker(Waker::noop())
}
