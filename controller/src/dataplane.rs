//! Starts what serves traffic: the proxy listener and the admin listener, until shutdown.
//!
//! ```text
//! source (manifests | API) ──compile──▶ RoutePublisher ══▶ RouteReader ──▶ proxy listener
//!                                                                     └──▶ admin listener
//! ```

use std::{future::Future, sync::Arc};

use shunt_proxy::{
    Registry,
    admin::Admin,
    forward::Proxy,
    metrics::ProxyMetrics,
    publish::{RoutePublisher, RouteReader},
    server, tls,
    upstream::UpstreamClients,
};
use tokio::sync::watch;
use tracing::info;

use crate::cli::ProxyArgs;

/// The pieces a route source needs to publish, and the listeners need to serve.
pub struct Dataplane {
    pub publisher: RoutePublisher,
    pub reader: RouteReader,
    pub metrics: ProxyMetrics,
}

impl Dataplane {
    /// Registers the proxy's metrics in `registry`; the caller adds its own before serving.
    pub fn new(registry: &mut Registry) -> Self {
        let metrics = ProxyMetrics::register(registry);
        let (publisher, reader) = RoutePublisher::new(metrics.clone());
        Dataplane { publisher, reader, metrics }
    }
}

/// Resolves once SIGTERM or SIGINT arrives; clone it into every task that must stop.
#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    /// Installs the signal handlers.
    pub fn on_signals() -> Self {
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            wait_for_signal().await;
            let _ = tx.send(true);
        });
        Shutdown(rx)
    }

    pub fn requested(self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.0;
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    }
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("installing a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("installing a SIGINT handler");
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    info!(signal = name, "Shutting down");
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
    info!("Shutting down");
}

/// Binds both listeners (failing fast on a taken port) and serves until `shutdown`.
pub async fn serve(
    args: &ProxyArgs,
    reader: RouteReader,
    metrics: ProxyMetrics,
    registry: Registry,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let clients = UpstreamClients::new(&args.client_options()?);
    let http = server::bind(args.http_addr).await?;
    let https = server::bind(args.https_addr).await?;
    let admin_listener = server::bind(args.admin_addr).await?;
    info!(listener = "http", addr = %http.local_addr()?, "Listening");
    info!(listener = "https", addr = %https.local_addr()?, "Listening");
    info!(listener = "admin", addr = %admin_listener.local_addr()?, "Listening");
    let acceptor = tls::acceptor(reader.clone(), tls::self_signed());

    let proxy = Proxy::new(reader.clone(), clients, args.proxy_options(), metrics);
    let admin = Admin::new(reader, Arc::new(registry));
    let options = args.server_options();
    let admin_options = server::ServerOptions { drain_timeout: std::time::Duration::from_secs(1), ..options.clone() };

    let handler = move |req, conn| {
        let proxy = proxy.clone();
        async move { proxy.serve(req, conn).await }
    };
    let proxy_server = server::serve(http, &options, None, handler.clone(), shutdown.clone().requested());
    let tls_server = server::serve(https, &options, Some(acceptor), handler, shutdown.clone().requested());
    let admin_server = server::serve(
        admin_listener,
        &admin_options,
        None,
        move |req, _conn| {
            let admin = admin.clone();
            async move { admin.serve(req).await }
        },
        shutdown.requested(),
    );
    tokio::try_join!(proxy_server, tls_server, admin_server)?;
    info!("Stopped");
    Ok(())
}
