//! Starts what serves traffic: the proxy listener and the admin listener, until shutdown.
//!
//! ```text
//! source (manifests | API) ──compile──▶ RoutePublisher ══▶ RouteReader ──▶ proxy listener
//!                                                                     └──▶ admin listener
//! ```

use std::{future::Future, sync::Arc};

use shunt_proxy::tls::TlsAcceptor;
use shunt_proxy::{
    Registry,
    admin::Admin,
    forward::{Proxy, ProxyOptions},
    metrics::{MetricsOptions, ProxyMetrics},
    publish::{RoutePublisher, RouteReader},
    server::{self, Listeners, metrics::ServerMetrics},
    tls,
    tunnel::Tunnels,
    upstream::{ClientOptions, UpstreamClients},
};
use tokio::{
    net::TcpListener,
    sync::{oneshot, watch},
};
use tracing::info;

use crate::cmd::ProxyArgs;

/// Connections the admin listener (probes, scrapes) may have open at once.
const ADMIN_MAX_CONNECTIONS: usize = 256;

/// The pieces a route source needs to publish, and the listeners need to serve.
pub struct Dataplane {
    pub publisher: RoutePublisher,
    pub reader: RouteReader,
    pub metrics: ProxyMetrics,
}

impl Dataplane {
    /// Registers the proxy's metrics in `registry`; the caller adds its own before serving.
    pub fn new(registry: &mut Registry, options: MetricsOptions) -> Self {
        let metrics = ProxyMetrics::register_with(registry, options);
        let (publisher, reader) = RoutePublisher::new(metrics.clone());
        Dataplane {
            publisher,
            reader,
            metrics,
        }
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

/// Binds the listeners (failing fast on a taken port) and serves until `shutdown`.
///
/// The proxy runs on `--threads` workers, each a single-threaded runtime with its own upstream
/// pools, all accepting from the same listening sockets (the kernel hands each connection to
/// one of them), the way nginx workers do: no task hops between threads on the request path.
/// The calling runtime keeps only the admin listener (and, in `shunt run`, the watchers); the
/// compile runs on the control thread (see `control.rs`), so no worker ever waits for either.
pub async fn serve(
    args: &ProxyArgs,
    reader: RouteReader,
    metrics: ProxyMetrics,
    mut registry: Registry,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let server_options = args.server_options();
    let server_metrics = ServerMetrics::register(&mut registry);
    let admin_metrics = ServerMetrics::register_admin(&mut registry);
    crate::telemetry::register(&mut registry);
    let tunnels = Tunnels::new(args.tunnel_idle_timeout, server_metrics.clone());
    let listeners = Listeners::new(&server_options, server_metrics, tunnels.clone());
    let worker = Worker {
        reader: reader.clone(),
        metrics,
        client_options: args.client_options()?,
        proxy_options: ProxyOptions {
            tunnels,
            ..args.proxy_options()
        },
        server_options,
        listeners,
        acceptor: tls::acceptor(reader.clone(), tls::self_signed()),
        shutdown: shutdown.clone(),
    };
    let http = server::bind_std(args.http_addr)?;
    let https = server::bind_std(args.https_addr)?;
    let admin_listener = server::bind(args.admin_addr).await?;
    let workers = args.workers();
    info!(listener = "http", addr = %http.local_addr()?, workers, "Listening");
    info!(listener = "https", addr = %https.local_addr()?, workers, "Listening");
    info!(listener = "admin", addr = %admin_listener.local_addr()?, "Listening");

    let mut finished_workers = Vec::with_capacity(workers);
    for index in 0..workers {
        let (http, https) = (http.try_clone()?, https.try_clone()?);
        let (done, finished) = oneshot::channel();
        let worker = worker.clone();
        std::thread::Builder::new()
            .name(format!("shunt-proxy-{index}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                let result = match runtime {
                    Ok(runtime) => runtime.block_on(worker.serve(http, https)),
                    Err(error) => Err(error.into()),
                };
                let _ = done.send(result);
            })?;
        finished_workers.push(finished);
    }

    let admin = Admin::new(reader, Arc::new(registry));
    let admin_options = server::ServerOptions {
        drain_timeout: std::time::Duration::from_secs(1),
        // Its own small budget, apart from the proxy's: a flood of clients never locks out probes.
        max_connections: ADMIN_MAX_CONNECTIONS,
        ..args.server_options()
    };
    let admin_listeners = Listeners::new(&admin_options, admin_metrics, Tunnels::default());
    let admin_server = server::serve(
        admin_listener,
        &admin_options,
        &admin_listeners,
        None,
        move |req, _conn| {
            let admin = admin.clone();
            async move { admin.serve(req).await }
        },
        shutdown.requested(),
    );
    drop((worker, http, https));
    admin_server.await?;
    for finished in finished_workers {
        // A worker that panicked dropped its sender: its connections are gone either way.
        finished.await.unwrap_or(Ok(()))?;
    }
    info!("Stopped");
    Ok(())
}

/// What each proxy worker thread needs; it builds its own `Proxy` (and pools) from it.
#[derive(Clone)]
struct Worker {
    reader: RouteReader,
    metrics: ProxyMetrics,
    client_options: ClientOptions,
    proxy_options: ProxyOptions,
    server_options: server::ServerOptions,
    listeners: Listeners,
    acceptor: TlsAcceptor,
    shutdown: Shutdown,
}

impl Worker {
    /// Serves both proxy listeners on the current runtime until shutdown, then drains.
    async fn serve(self, http: std::net::TcpListener, https: std::net::TcpListener) -> anyhow::Result<()> {
        let (http, https) = (TcpListener::from_std(http)?, TcpListener::from_std(https)?);
        let clients = UpstreamClients::new(&self.client_options);
        let proxy = Proxy::new(self.reader, clients, self.proxy_options, self.metrics);
        let handler = move |req, conn| {
            let proxy = proxy.clone();
            async move { proxy.serve(req, conn).await }
        };
        let (options, listeners) = (&self.server_options, &self.listeners);
        let plain = server::serve(
            http,
            options,
            listeners,
            None,
            handler.clone(),
            self.shutdown.clone().requested(),
        );
        let tls = server::serve(
            https,
            options,
            listeners,
            Some(self.acceptor),
            handler,
            self.shutdown.requested(),
        );
        tokio::try_join!(plain, tls)?;
        Ok(())
    }
}
