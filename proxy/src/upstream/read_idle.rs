//! nginx's `proxy_read_timeout` on a response body: the longest wait between two reads from the
//! pod, not a deadline for the whole body, so a slow stream or a long poll lives as long as it
//! keeps sending. Only routes with their own read timeout pay for the timer.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll, ready},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use super::{BoxError, UpstreamBody};

/// A pod's body whose reads may wait at most `timeout` each; a longer wait ends it with
/// [`ReadTimeout`], which cuts the answer as nginx does once the head has gone out.
pub struct ReadIdle<B = UpstreamBody> {
    inner: B,
    timeout: Duration,
    /// Made once with the body and reset on each wait, so a stream of frames allocates nothing.
    timer: Pin<Box<Sleep>>,
    /// The timer runs for the current wait.
    armed: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("no response body bytes from the pod for {0:?}")]
pub struct ReadTimeout(pub Duration);

impl<B> ReadIdle<B> {
    pub fn new(inner: B, timeout: Duration) -> Self {
        ReadIdle {
            inner,
            timeout,
            timer: Box::pin(tokio::time::sleep(timeout)),
            armed: false,
        }
    }
}

impl<B> Body for ReadIdle<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            this.armed = false;
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if !this.armed {
            this.timer.as_mut().reset(Instant::now() + this.timeout);
            this.armed = true;
        }
        ready!(this.timer.as_mut().poll(cx));
        Poll::Ready(Some(Err(ReadTimeout(this.timeout).into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests;
