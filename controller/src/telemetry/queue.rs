//! The log queue: formatted lines go to a writer thread through a channel that allocates as it
//! fills (std's `mpsc`, in blocks of a few dozen lines), with the bound counted here. A channel
//! with the bound built in (tracing-appender's) reserves every slot up front: 2 MiB for 64k lines
//! that an idle controller never queues.
//!
//! ```text
//! event ─write─▶ queued < limit? ─yes─▶ channel ─▶ writer thread ─▶ sink (stderr)
//!                       └ no: dropped, counted
//! ```

use std::{
    io::{self, Write},
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
        mpsc,
    },
    time::Duration,
};

use tracing_subscriber::fmt::MakeWriter;

/// How long dropping the guard waits for queued lines to be written.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(1);

/// The sending side; `&LineQueue` is what each event writes its line to.
pub struct LineQueue {
    sender: mpsc::Sender<Message>,
    counts: Arc<Counts>,
}

/// Flushes queued lines when dropped (bounded by [`FLUSH_TIMEOUT`]): keep it until exit.
pub struct FlushGuard {
    sender: mpsc::Sender<Message>,
}

/// Counts shared by the writers and the writer thread.
#[derive(Debug)]
pub struct Counts {
    /// Lines accepted and not yet written (the one being written included).
    queued: AtomicUsize,
    limit: usize,
    dropped: AtomicU64,
}

enum Message {
    Line(Vec<u8>),
    /// Flush the sink, then answer.
    Flush(mpsc::SyncSender<()>),
}

/// Starts the writer thread: lines written to the queue go to `sink` in order, at most `limit`
/// waiting at once; past that, new lines are dropped and counted.
pub fn spawn<W: Write + Send + 'static>(
    sink: W,
    limit: usize,
    thread_name: &str,
) -> io::Result<(LineQueue, FlushGuard, Arc<Counts>)> {
    let (sender, receiver) = mpsc::channel();
    let counts = Arc::new(Counts {
        queued: AtomicUsize::new(0),
        limit,
        dropped: AtomicU64::new(0),
    });
    let thread_counts = counts.clone();
    std::thread::Builder::new()
        .name(thread_name.into())
        .spawn(move || write_lines(receiver, sink, &thread_counts))?;
    let guard = FlushGuard { sender: sender.clone() };
    Ok((
        LineQueue {
            sender,
            counts: counts.clone(),
        },
        guard,
        counts,
    ))
}

/// The writer thread: until every sender is gone.
fn write_lines(receiver: mpsc::Receiver<Message>, mut sink: impl Write, counts: &Counts) {
    for message in receiver {
        match message {
            Message::Line(line) => {
                // Nowhere to report a failing log sink; the line is gone either way.
                let _ = sink.write_all(&line);
                counts.queued.fetch_sub(1, Ordering::Relaxed);
            }
            Message::Flush(done) => {
                let _ = sink.flush();
                let _ = done.send(());
            }
        }
    }
}

// === impl Counts ===

impl Counts {
    /// Lines dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

// === impl LineQueue ===

impl Write for &LineQueue {
    /// Queues `buf` as one line (the formatter writes each event with one call), or drops it
    /// when `limit` lines are waiting. Never blocks, never fails.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let counts = &self.counts;
        if counts.queued.fetch_add(1, Ordering::Relaxed) >= counts.limit
            || self.sender.send(Message::Line(buf.to_vec())).is_err()
        {
            counts.queued.fetch_sub(1, Ordering::Relaxed);
            counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LineQueue {
    type Writer = &'a LineQueue;

    fn make_writer(&'a self) -> Self::Writer {
        self
    }
}

// === impl FlushGuard ===

impl Drop for FlushGuard {
    fn drop(&mut self) {
        let (done, flushed) = mpsc::sync_channel(1);
        if self.sender.send(Message::Flush(done)).is_ok() {
            let _ = flushed.recv_timeout(FLUSH_TIMEOUT);
        }
    }
}

#[cfg(test)]
mod tests;
