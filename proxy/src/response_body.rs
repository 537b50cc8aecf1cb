//! The body the client is answered with: the pod's, streamed with what must live as long as it
//! (the endpoint's in-flight count, the caller's place under a connection limit), or a short one
//! of the proxy's own. Apart from `body.rs` because it holds upstream types that `body.rs`'s
//! request side must not: the upstream client sends that request body.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::{
    headers::TrailerFilter,
    limits::InProgress,
    upstream::{BoxError, EndpointGuard, UpstreamBody},
};

/// The body we answer with: an upstream's, or a short one of our own.
pub enum ResponseBody {
    Full(Option<Bytes>),
    Upstream {
        /// An HTTP/1 body returns its connection to the pool once done.
        body: UpstreamBody,
        /// What of the pod's trailers may reach the client.
        trailers: TrailerFilter,
        /// Keeps the endpoint's in-flight count until the body is done.
        _guard: Option<EndpointGuard>,
        /// Keeps the caller's place under the route's requests-in-progress limit, as nginx
        /// counts a request until its response is sent. Boxed: only limited routes pay for it.
        _in_progress: Option<Box<InProgress>>,
    },
}

// === impl ResponseBody ===

impl ResponseBody {
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        ResponseBody::Full(Some(bytes.into()))
    }

    /// Holds `in_progress` until the pod's body is done; an answer made here is done already.
    pub fn hold(&mut self, in_progress: InProgress) {
        if let ResponseBody::Upstream { _in_progress, .. } = self {
            *_in_progress = Some(Box::new(in_progress));
        }
    }

    pub fn empty() -> Self {
        ResponseBody::Full(None)
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            ResponseBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Upstream { body, trailers, .. } => match Pin::new(body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_trailers() {
                    Ok(sent) => Poll::Ready(trailers.apply(sent).map(|kept| Ok(Frame::trailers(kept)))),
                    Err(frame) => Poll::Ready(Some(Ok(frame))),
                },
                other => other,
            },
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
