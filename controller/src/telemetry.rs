//! Logging setup: `RUST_LOG` filters (default `info`, rustls `error`), text or JSON lines on
//! stderr, written by a background thread so a slow or stalled log pipe never blocks a request.
//!
//! ```text
//! request path ─event─▶ bounded queue ─▶ writer thread ─▶ stderr
//!                            └ full: line dropped, counted (shunt_log_lines_dropped)
//! ```

use std::sync::{Arc, OnceLock};

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::counter::ConstCounter,
    registry::Registry,
};
use tracing_subscriber::{EnvFilter, fmt};

mod queue;

pub use queue::FlushGuard;

/// How each log line is written (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Lines the queue holds before new ones are dropped (memory is taken as lines queue, ~32 B
/// plus the line each).
const QUEUED_LINES: usize = 64 * 1024;

/// The queue's counts (dropped lines); set once by [`init`].
static COUNTS: OnceLock<Arc<queue::Counts>> = OnceLock::new();

/// Installs the subscriber; keep the guard until exit: dropping it flushes queued lines.
pub fn init(format: LogFormat) -> Option<FlushGuard> {
    // rustls warns once per handshake about clients that put an IP address in SNI (wrk, some
    // SDKs): a client's quirk, not ours, and a log line per connection at scale.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let (writer, guard, counts) = match queue::spawn(std::io::stderr(), QUEUED_LINES, "shunt-log") {
        Ok(queue) => queue,
        Err(error) => {
            eprintln!("log writer thread failed to start, logging nothing: {error}");
            return None;
        }
    };
    let builder = fmt().with_env_filter(filter).with_writer(writer);
    let result = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
    if let Err(error) = result {
        eprintln!("logging was already initialised: {error}");
        return None;
    }
    let _ = COUNTS.set(counts);
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
        let counter = ConstCounter::new(COUNTS.get().map_or(0, |counts| counts.dropped()));
        let metric = encoder.encode_descriptor(
            "shunt_log_lines_dropped",
            "Log lines dropped because the log writer fell behind",
            None,
            counter.metric_type(),
        )?;
        counter.encode(metric)
    }
}
