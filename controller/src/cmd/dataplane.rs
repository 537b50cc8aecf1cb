//! Starts what serves traffic from the proxy flags: the proxy crate's dataplane (workers and the
//! admin listener) with this binary's own metrics added, until shutdown.

pub use shunt_proxy::dataplane::{Dataplane, Shutdown};
use shunt_proxy::{
    dataplane::{DataplaneOptions, ProxyMetrics, Registry},
    publish::RouteReader,
};

use super::ProxyArgs;

/// Binds the listeners (failing fast on a taken port) and serves until `shutdown`.
///
/// The compile runs on the control thread (see `control.rs`), so no proxy worker ever waits
/// for it.
pub async fn serve(
    args: &ProxyArgs,
    reader: RouteReader,
    metrics: ProxyMetrics,
    mut registry: Registry,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let options = DataplaneOptions {
        http_addr: args.http_addr,
        https_addr: args.https_addr,
        admin_addr: args.admin_addr,
        workers: args.workers(),
        server: args.server_options(),
        client: args.client_options()?,
        proxy: args.proxy_options(),
        tunnel_idle_timeout: args.tunnel_idle_timeout.0,
        gateway_ports: args.gateway_ports()?,
    };
    let bound = Dataplane::bind(options, reader, metrics, &mut registry).await?;
    crate::telemetry::register(&mut registry);
    bound.serve(registry, shutdown).await?;
    Ok(())
}
