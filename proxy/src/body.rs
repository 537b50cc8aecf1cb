//! Body types on both sides of the proxy. Bodies stream; nothing is buffered.
//!
//! A request body waits in a [`BodySlot`] until the upstream connection first polls it, so a
//! request whose connection attempt failed still has its body and can go to another endpoint.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::{Instant, Sleep};

use crate::upstream::EndpointGuard;

/// The body we send upstream.
pub enum RequestBody {
    Empty,
    Stream(StreamBody),
}

pub struct StreamBody {
    slot: Arc<BodySlot>,
    body: Option<Incoming>,
    hint: SizeHint,
    /// Bytes still allowed by `--max-body-size`.
    remaining: Option<u64>,
    limit: u64,
    /// `--client-body-timeout`: the longest wait for the next frame, armed while one is awaited.
    read_timeout: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

/// Holds a request body until it is first polled; see the module docs.
#[derive(Default)]
pub struct BodySlot(Mutex<Option<Incoming>>);

#[derive(Debug, thiserror::Error)]
pub enum RequestBodyError {
    #[error("reading request body: {0}")]
    Read(#[source] hyper::Error),
    #[error("request body exceeds {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("no request body bytes for {timeout:?}")]
    Timeout { timeout: Duration },
}

/// The body we answer with: an upstream's, or a short one of our own.
pub enum ResponseBody {
    Full(Option<Bytes>),
    Upstream {
        body: Incoming,
        /// Keeps the endpoint's in-flight count until the body is done.
        _guard: Option<EndpointGuard>,
    },
}

// === impl RequestBody ===

impl RequestBody {
    /// Wraps a client's body; `slot` lets the caller recover it if it was never polled.
    pub fn stream(body: Incoming, max_size: Option<u64>, read_timeout: Duration) -> (Self, Arc<BodySlot>) {
        let hint = body.size_hint();
        let slot = Arc::new(BodySlot(Mutex::new(Some(body))));
        (Self::resume(&slot, hint, max_size, read_timeout), slot)
    }

    /// A body reading from `slot` again, after an attempt that never polled it failed.
    pub fn resume(slot: &Arc<BodySlot>, hint: SizeHint, max_size: Option<u64>, read_timeout: Duration) -> Self {
        let body = StreamBody {
            slot: slot.clone(),
            body: None,
            hint,
            remaining: max_size,
            limit: max_size.unwrap_or(0),
            read_timeout,
            stalled: None,
        };
        RequestBody::Stream(body)
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = RequestBodyError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = match self.get_mut() {
            RequestBody::Empty => return Poll::Ready(None),
            RequestBody::Stream(stream) => stream,
        };
        if this.body.is_none() {
            this.body = this.slot.take();
        }
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(None);
        };
        let frame = match Pin::new(body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(RequestBodyError::Read(error)))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {
                let timeout = this.read_timeout;
                let stalled = this
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + timeout)));
                if stalled.as_mut().poll(cx).is_ready() {
                    this.stalled = None;
                    return Poll::Ready(Some(Err(RequestBodyError::Timeout { timeout })));
                }
                return Poll::Pending;
            }
        };
        this.stalled = None;
        if let (Some(remaining), Some(data)) = (this.remaining.as_mut(), frame.data_ref()) {
            let len = data.len() as u64;
            if len > *remaining {
                return Poll::Ready(Some(Err(RequestBodyError::TooLarge { limit: this.limit })));
            }
            *remaining -= len;
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RequestBody::Empty => true,
            RequestBody::Stream(stream) => stream.body.as_ref().is_some_and(Body::is_end_stream),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Empty => SizeHint::with_exact(0),
            RequestBody::Stream(stream) => stream.body.as_ref().map_or_else(|| stream.hint, Body::size_hint),
        }
    }
}

// === impl BodySlot ===

impl BodySlot {
    /// The body, if nothing has polled it yet.
    pub fn take(&self) -> Option<Incoming> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }

    /// True while the body is still here, i.e. it can be sent again.
    pub fn is_full(&self) -> bool {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some()
    }
}

// === impl ResponseBody ===

impl ResponseBody {
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        ResponseBody::Full(Some(bytes.into()))
    }

    pub fn empty() -> Self {
        ResponseBody::Full(None)
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            ResponseBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Upstream { body, .. } => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Full(bytes) => bytes.is_none(),
            ResponseBody::Upstream { body, .. } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            ResponseBody::Upstream { body, .. } => body.size_hint(),
        }
    }
}
