//! Logging setup: `RUST_LOG` filters (default `info`, rustls `error`), text or JSON lines on
//! stderr, written by a background thread so a slow or stalled log pipe never blocks a request.
//!
//! ```text
//! request path ─event─▶ bounded queue ─▶ writer thread ─▶ stderr
//!                            └ full: line dropped, counted (shunt_log_lines_dropped)
//! ```

use std::sync::OnceLock;

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::counter::ConstCounter,
    registry::Registry,
};
use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::{EnvFilter, fmt};

use crate::cli::LogFormat;

/// Lines the queue holds before new ones are dropped.
const QUEUED_LINES: usize = 64 * 1024;

/// Lines dropped because the queue was full; set once by [`init`].
static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// Installs the subscriber; keep the guard until exit: dropping it flushes queued lines.
pub fn init(format: LogFormat) -> Option<WorkerGuard> {
    // rustls warns once per handshake about clients that put an IP address in SNI (wrk, some
    // SDKs): a client's quirk, not ours, and a log line per connection at scale.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUED_LINES)
        .thread_name("shunt-log")
        .finish(std::io::stderr());
    let dropped = writer.error_counter();
    let builder = fmt().with_env_filter(filter).with_writer(writer);
    let result = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
    if let Err(error) = result {
        eprintln!("logging was already initialised: {error}");
        return None;
    }
    let _ = DROPPED.set(dropped);
    Some(guard)
}

/// Exposes the dropped-line count on /metrics.
pub fn register(registry: &mut Registry) {
    registry.register_collector(Box::new(DroppedLines));
}

#[derive(Debug)]
struct DroppedLines;

impl Collector for DroppedLines {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let dropped = DROPPED.get().map_or(0, ErrorCounter::dropped_lines);
        let counter = ConstCounter::new(u64::try_from(dropped).unwrap_or(u64::MAX));
        let metric = encoder.encode_descriptor(
            "shunt_log_lines_dropped",
            "Log lines dropped because the log writer fell behind",
            None,
            counter.metric_type(),
        )?;
        counter.encode(metric)
    }
}
