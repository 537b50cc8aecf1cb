//! A body written on another thread while it is sent: a large admin document goes out in chunks of
//! at most [`CHUNK`] bytes, with at most [`QUEUED`] of them waiting, however large the whole. The
//! writer waits for the client; a client that stops reading for `send_timeout`, has not taken the
//! whole by the `deadline`, or leaves, fails the writer's next write, so it stops there.

use std::{
    io,
    task::{Context, Poll, ready},
    time::Duration,
};

use bytes::{Bytes, BytesMut};
use tokio::{runtime::Handle, sync::mpsc, time::Instant};

use crate::upstream::BoxError;

/// The most bytes one chunk carries.
pub const CHUNK: usize = 64 * 1024;

/// Chunks written and not yet taken by the connection: with the one being filled and the one
/// being sent, a body holds at most `QUEUED + 2` chunks.
pub const QUEUED: usize = 2;

enum Piece {
    Chunk(Bytes),
    /// The writer finished: without it, a closed channel means the writer stopped part-way.
    End,
}

/// The receiving side, polled as the response body.
pub struct Streamed {
    pieces: mpsc::Receiver<Piece>,
    ended: bool,
}

/// The writing side: bytes written reach the client in chunks. Must run where it may block (tokio's
/// blocking pool), on the runtime the body is polled on.
pub struct ChunkWriter {
    buffer: BytesMut,
    pieces: mpsc::Sender<Piece>,
    runtime: Handle,
    send_timeout: Duration,
    deadline: Instant,
}

/// A writer and the body it feeds, which must be sent whole within `whole_within`; the writer
/// must be used from a thread of the current runtime's blocking pool.
pub fn channel(send_timeout: Duration, whole_within: Duration) -> (ChunkWriter, Streamed) {
    let (sender, pieces) = mpsc::channel(QUEUED);
    let writer = ChunkWriter {
        buffer: BytesMut::new(),
        pieces: sender,
        runtime: Handle::current(),
        send_timeout,
        deadline: Instant::now() + whole_within,
    };
    (writer, Streamed { pieces, ended: false })
}

// === impl Streamed ===

impl Streamed {
    pub(super) fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BoxError>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let piece = ready!(self.pieces.poll_recv(cx));
        if !matches!(piece, Some(Piece::Chunk(_))) {
            self.ended = true;
        }
        Poll::Ready(match piece {
            Some(Piece::Chunk(chunk)) => Some(Ok(chunk)),
            Some(Piece::End) => None,
            None => Some(Err("the document's writer stopped before its end".into())),
        })
    }

    pub(super) fn is_end_stream(&self) -> bool {
        self.ended
    }
}

// === impl ChunkWriter ===

impl ChunkWriter {
    /// Sends what is left and marks the end: the body ends cleanly only after this.
    pub fn finish(mut self) -> io::Result<()> {
        self.send_buffered()?;
        self.send(Piece::End)
    }

    fn send_buffered(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = self.buffer.split().freeze();
        self.send(Piece::Chunk(chunk))
    }

    fn send(&self, piece: Piece) -> io::Result<()> {
        let within = (self.deadline.saturating_duration_since(Instant::now())).min(self.send_timeout);
        let sent = self
            .runtime
            .block_on(tokio::time::timeout(within, self.pieces.send(piece)));
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the client left")),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading, or read too slowly",
            )),
        }
    }
}

impl io::Write for ChunkWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buffer.capacity() == 0 {
            self.buffer.reserve(CHUNK);
        }
        let taken = bytes.len().min(CHUNK - self.buffer.len());
        self.buffer.extend_from_slice(&bytes[..taken]);
        if self.buffer.len() == CHUNK {
            self.send_buffered()?;
        }
        Ok(taken)
    }

    /// Sends the chunk being filled, short as it may be.
    fn flush(&mut self) -> io::Result<()> {
        self.send_buffered()
    }
}
