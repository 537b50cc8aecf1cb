//! `shunt serve`: Ingress manifests from files, no cluster; edits apply live.
//!
//! ```text
//! files ─poll─▶ manifests::ManifestSource ─▶ control::compile_loop (control thread) ══▶ proxy workers
//! ```

use std::{path::PathBuf, time::Duration};

use clap::Args;

use super::{ClassArgs, LogArgs, ProxyArgs, parse::Span};
use crate::{
    cmd::dataplane::{Dataplane, Shutdown},
    compile::CompileOptions,
    control::ControlPlane,
    manifests::{ManifestSource, ManifestWatcher},
    metrics::ControllerMetrics,
};

/// `--poll-interval`.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Manifest file or directory (YAML or JSON, as `kubectl get -o yaml` writes them); repeatable.
    #[arg(long = "manifests", short = 'f', required = true, value_name = "PATH")]
    pub manifests: Vec<PathBuf>,
    /// How often manifest files are checked for changes.
    #[arg(long, default_value_t = Span(POLL_INTERVAL))]
    pub poll_interval: Span,
    #[command(flatten)]
    pub proxy: ProxyArgs,
    #[command(flatten)]
    pub classes: ClassArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

/// Serves `args.manifests` until SIGTERM/SIGINT.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    args.classes.check()?;
    let watcher = ManifestWatcher::new(args.manifests)?;
    serve_manifests(
        watcher,
        &args.proxy,
        args.classes.compile_options(),
        args.poll_interval.0,
    )
    .await
}

/// Serves what `watcher` finds, checking for changes every `poll_interval`, until SIGTERM/SIGINT.
pub async fn serve_manifests(
    watcher: ManifestWatcher,
    proxy: &ProxyArgs,
    options: CompileOptions,
    poll_interval: Duration,
) -> anyhow::Result<()> {
    let options = proxy.with_gateway_ports(options)?;
    let mut registry = shunt_proxy::dataplane::Registry::default();
    let mut dataplane = Dataplane::new(&mut registry, proxy.metrics_options());
    dataplane.publisher.set_topology(proxy.topology());
    let metrics = ControllerMetrics::register(&mut registry);
    let shutdown = Shutdown::on_signals();
    let control = ControlPlane::new(dataplane.publisher, metrics);
    let (source, stop) = (
        ManifestSource::new(watcher, poll_interval),
        shutdown.clone().requested(),
    );
    crate::control::spawn_thread(move || crate::control::compile_loop(source, options, control, stop))?;
    super::dataplane::serve(proxy, dataplane.reader, dataplane.metrics, registry, shutdown).await
}
