//! Logging setup: `RUST_LOG` filters (default `info`, rustls `error`), text or JSON lines on stderr.

use tracing_subscriber::{EnvFilter, fmt};

use crate::cli::LogFormat;

pub fn init(format: LogFormat) {
    // rustls warns once per handshake about clients that put an IP address in SNI (wrk, some
    // SDKs): a client's quirk, not ours, and a log line per connection at scale.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
    if let Err(error) = result {
        eprintln!("logging was already initialised: {error}");
    }
}
