//! The request body, from the client to the pods. Bodies stream; nothing is buffered beyond a bounded
//! replay copy.
//!
//! A request body lives in a [`BodySlot`] that every attempt reads through. The slot keeps the
//! first [`REPLAY_LIMIT`] bytes it handed out, so a request the pod never processed (a refused
//! h2 stream, a graceful GOAWAY, a connection that failed) can go again with its body: the next
//! attempt replays the copy, then reads on from the client. A body larger than the limit is
//! streamed without a copy and is not retried once any of it was sent.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, MutexGuard},
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::{Instant, Sleep};

use crate::headers::TrailerFilter;

/// How long, and how much, an unread body is still read after its answer ([`ClientBody::linger`]).
const LINGER_TIME: Duration = Duration::from_secs(5);
const LINGER_BYTES: u64 = 8 << 20;

/// Bytes of a request body kept for a retry; see the module docs.
pub const REPLAY_LIMIT: usize = 64 * 1024;

/// The client's body as a server hands it to the proxy: hyper's stream, or what our HTTP/1.1
/// loop read whole with the head (`None`: the request has no body).
#[derive(Debug)]
pub enum ClientBody {
    Read(Option<Bytes>),
    Hyper(Incoming),
}

/// The body we send upstream.
pub enum RequestBody {
    Empty,
    Stream(StreamBody),
}

/// One attempt's view of the client's body.
pub struct StreamBody {
    slot: Arc<BodySlot>,
    /// Which attempt this is; an older attempt's body reads nothing more.
    attempt: u32,
    /// Next replayed chunk to send, an index into the slot's copy.
    replayed: usize,
    /// Bytes still allowed by `--max-body-size`.
    remaining: Option<u64>,
    limit: u64,
    /// `--client-body-timeout`: the longest wait for the client's next frame, armed while one
    /// is awaited.
    read_timeout: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

/// The client's body, shared by the attempts; see the module docs.
pub struct BodySlot(Mutex<SlotState>);

struct SlotState {
    body: ClientBody,
    hint: SizeHint,
    /// The latest attempt; only it may read.
    attempt: u32,
    /// What was read so far, while it fits [`REPLAY_LIMIT`] and `replayable` holds.
    copy: Vec<Bytes>,
    copied: usize,
    /// False once something was read that the copy does not hold (too much, or trailers).
    replayable: bool,
    /// Reading from the client failed: it went away or broke the body.
    client_failed: bool,
    /// What of the client's trailers may reach a pod.
    trailers: TrailerFilter,
}

#[derive(Debug, thiserror::Error)]
pub enum RequestBodyError {
    #[error("reading request body: {0}")]
    Read(#[source] hyper::Error),
    /// The client sent a body its framing does not allow (a bad chunk, a bad trailer section).
    #[error("malformed request body: {0}")]
    Malformed(#[source] hyper::Error),
    #[error("request body exceeds {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("no request body bytes for {timeout:?}")]
    Timeout { timeout: Duration },
}

// === impl RequestBody ===

impl RequestBody {
    /// Wraps a client's body; `slot` gives later attempts a body of their own. `trailers`
    /// filters the client's trailer section.
    pub fn stream(
        body: ClientBody,
        max_size: Option<u64>,
        read_timeout: Duration,
        trailers: TrailerFilter,
    ) -> (Self, Arc<BodySlot>) {
        let state = SlotState {
            hint: body.size_hint(),
            body,
            attempt: 0,
            copy: Vec::new(),
            copied: 0,
            replayable: true,
            client_failed: false,
            trailers,
        };
        let slot = Arc::new(BodySlot(Mutex::new(state)));
        (Self::attempt(&slot, 0, max_size, read_timeout), slot)
    }

    /// The body for another attempt, from the start, or `None` when what was sent cannot be
    /// replayed. Earlier attempts' bodies end.
    pub fn resume(slot: &Arc<BodySlot>, max_size: Option<u64>, read_timeout: Duration) -> Option<Self> {
        let attempt = {
            let mut state = slot.lock();
            if !state.replayable {
                return None;
            }
            state.attempt += 1;
            state.attempt
        };
        Some(Self::attempt(slot, attempt, max_size, read_timeout))
    }

    fn attempt(slot: &Arc<BodySlot>, attempt: u32, max_size: Option<u64>, read_timeout: Duration) -> Self {
        RequestBody::Stream(StreamBody {
            slot: slot.clone(),
            attempt,
            replayed: 0,
            remaining: max_size,
            limit: max_size.unwrap_or(0),
            read_timeout,
            stalled: None,
        })
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
        let mut state = this.slot.lock();
        if state.attempt != this.attempt {
            return Poll::Ready(None);
        }
        let frame = if let Some(chunk) = state.copy.get(this.replayed) {
            this.replayed += 1;
            Frame::data(chunk.clone())
        } else {
            match Pin::new(&mut state.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    state.record(&frame);
                    this.replayed = state.copy.len();
                    match frame.into_trailers() {
                        Ok(trailers) => match state.trailers.apply(trailers) {
                            Some(kept) => Frame::trailers(kept),
                            None => return Poll::Ready(None),
                        },
                        Err(frame) => frame,
                    }
                }
                Poll::Ready(Some(Err(error))) => {
                    state.client_failed = true;
                    return Poll::Ready(Some(Err(RequestBodyError::from_client(error))));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {
                    drop(state);
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
            }
        };
        drop(state);
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
            RequestBody::Stream(stream) => {
                let state = stream.slot.lock();
                stream.replayed >= state.copy.len() && state.body.is_end_stream()
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Empty => SizeHint::with_exact(0),
            RequestBody::Stream(stream) => stream.slot.lock().hint,
        }
    }
}

impl RequestBodyError {
    /// hyper reports a body that breaks its framing as invalid data or input; a client that
    /// went away mid-body as an unexpected end or a reset.
    fn from_client(error: hyper::Error) -> Self {
        let malformed = std::error::Error::source(&error)
            .and_then(|source| source.downcast_ref::<std::io::Error>())
            .is_some_and(|io| {
                matches!(
                    io.kind(),
                    std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput
                )
            });
        if malformed || error.is_parse() {
            RequestBodyError::Malformed(error)
        } else {
            RequestBodyError::Read(error)
        }
    }
}

// === impl ClientBody ===

impl ClientBody {
    pub fn empty() -> Self {
        ClientBody::Read(None)
    }

    /// Reads and drops what is left of a body answered before it was read (a 413, a redirect),
    /// in the background, within [`LINGER_TIME`] and [`LINGER_BYTES`]: the client, still
    /// sending it, then gets the answer instead of a reset (nginx's lingering close, for the
    /// same reason).
    pub fn linger(self) {
        // A body our own loop read with the head is in memory already.
        if !matches!(self, ClientBody::Hyper(_)) || self.is_end_stream() {
            return;
        }
        let mut body = self;
        tokio::spawn(async move {
            let drain = async {
                let mut read = 0u64;
                while let Some(Ok(frame)) = http_body_util::BodyExt::frame(&mut body).await {
                    read += frame.data_ref().map_or(0, |data| data.len() as u64);
                    if read > LINGER_BYTES {
                        break;
                    }
                }
            };
            drop(tokio::time::timeout(LINGER_TIME, drain).await);
        });
    }
}

impl Body for ClientBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            ClientBody::Read(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ClientBody::Hyper(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ClientBody::Read(bytes) => bytes.is_none(),
            ClientBody::Hyper(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ClientBody::Read(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            ClientBody::Hyper(body) => body.size_hint(),
        }
    }
}

// === impl BodySlot ===

impl BodySlot {
    /// True when reading the body from the client failed: the client aborted, not the pod.
    pub fn client_failed(&self) -> bool {
        self.lock().client_failed
    }

    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SlotState {
    /// Keeps `frame` for a replay while the copy stays within [`REPLAY_LIMIT`].
    fn record(&mut self, frame: &Frame<Bytes>) {
        if !self.replayable {
            return;
        }
        match frame.data_ref() {
            Some(data) if self.copied + data.len() <= REPLAY_LIMIT => {
                self.copied += data.len();
                self.copy.push(data.clone());
            }
            // Too large, or trailers: give up the copy, this body goes once.
            _ => {
                self.replayable = false;
                self.copy = Vec::new();
                self.copied = 0;
            }
        }
    }
}
