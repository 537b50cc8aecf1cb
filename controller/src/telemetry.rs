//! Logging setup: `RUST_LOG` filters (default `info`), text or JSON lines on stderr.

use tracing_subscriber::{EnvFilter, fmt};

use crate::cli::LogFormat;

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
    if let Err(error) = result {
        eprintln!("logging was already initialised: {error}");
    }
}
