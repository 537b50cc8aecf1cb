//! The body the client is answered with: the pod's, streamed with what must live as long as it
//! (the endpoint's in-flight count, the caller's place under a connection limit), a short one
//! of the proxy's own, paced when the route says so (`pace.rs`), or an admin document written
//! while it is sent (`streamed.rs`). Apart from `body.rs` because it holds upstream types that `body.rs`'s
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
    pace::Pacer,
    spec::ResponsePace,
    upstream::{BoxError, EndpointGuard, UpstreamBody},
};

pub(crate) mod streamed;

pub use streamed::{ChunkWriter, Streamed};

/// The body we answer with: an upstream's, a short one of our own, or one written as it is sent.
pub enum ResponseBody {
    Full(Option<Bytes>),
    /// Boxed: only the admin listener's documents use it.
    Streamed(Box<Streamed>),
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
        /// ingress-nginx's `limit-rate`: `None` but on paced routes; boxed, as above.
        pace: Option<Box<Pacer>>,
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

    /// Sends the pod's body at `pace`; an answer made here is short and goes as it is.
    pub fn pace(&mut self, pace: ResponsePace) {
        if let ResponseBody::Upstream { pace: slot, .. } = self {
            *slot = Some(Box::new(Pacer::new(pace)));
        }
    }

    pub fn empty() -> Self {
        ResponseBody::Full(None)
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    #[inline]
    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            ResponseBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Streamed(streamed) => streamed.poll_chunk(cx).map(|chunk| chunk.map(|c| c.map(Frame::data))),
            ResponseBody::Upstream {
                body,
                trailers,
                pace: None,
                ..
            } => poll_pod(body, trailers, cx),
            ResponseBody::Upstream {
                body,
                trailers,
                pace: Some(pacer),
                ..
            } => poll_paced(body, trailers, pacer, cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Full(bytes) => bytes.is_none(),
            ResponseBody::Streamed(streamed) => streamed.is_end_stream(),
            ResponseBody::Upstream { body, pace, .. } => {
                body.is_end_stream() && pace.as_ref().is_none_or(|pacer| pacer.held() == 0)
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            ResponseBody::Streamed(_) => SizeHint::default(),
            ResponseBody::Upstream { body, pace, .. } => {
                let mut hint = body.size_hint();
                if let Some(held) = pace.as_ref().map(|pacer| pacer.held()).filter(|&held| held > 0) {
                    let upper = hint.upper().map(|upper| upper.saturating_add(held));
                    hint.set_lower(hint.lower().saturating_add(held));
                    if let Some(upper) = upper {
                        hint.set_upper(upper);
                    }
                }
                hint
            }
        }
    }
}

/// The pod's body at the route's pace. Out of line: unpaced answers, nearly all, inline only
/// their own arm.
#[inline(never)]
fn poll_paced(
    body: &mut UpstreamBody,
    trailers: &mut TrailerFilter,
    pacer: &mut Pacer,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
    // One chunk at most is held: the pod is read again once it is all out.
    if pacer.held() == 0 {
        match poll_pod(body, trailers, cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) if !data.is_empty() => pacer.hold(data),
                Ok(data) => return Poll::Ready(Some(Ok(Frame::data(data)))),
                Err(frame) => return Poll::Ready(Some(Ok(frame))),
            },
            other => return other,
        }
    }
    pacer.poll_release(cx).map(|data| Some(Ok(Frame::data(data))))
}

/// The pod's next frame, its trailers filtered.
fn poll_pod(
    body: &mut UpstreamBody,
    trailers: &mut TrailerFilter,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
    match Pin::new(body).poll_frame(cx) {
        Poll::Ready(Some(Ok(frame))) => match frame.into_trailers() {
            Ok(sent) => Poll::Ready(trailers.apply(sent).map(|kept| Ok(Frame::trailers(kept)))),
            Err(frame) => Poll::Ready(Some(Ok(frame))),
        },
        other => other,
    }
}
