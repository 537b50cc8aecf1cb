//! Starts what serves traffic: the proxy workers and the admin listener, until shutdown.
//!
//! ```text
//! source (manifests | API) ──compile──▶ RoutePublisher ══▶ RouteReader ──▶ proxy workers (one runtime each)
//!                                                                     └──▶ admin listener (caller's runtime)
//! ```
//!
//! The proxy runs on several workers, each a thread with a single-threaded runtime and its own
//! upstream pools, all accepting from the same listening sockets (the kernel hands each
//! connection to one of them), the way nginx workers do: no task hops between threads on the
//! request path. The calling runtime keeps only the admin listener (and whatever else the
//! caller runs on it, such as watchers).

use std::{future::Future, io, net::SocketAddr, sync::Arc, time::Duration};

use tokio::{
    net::TcpListener,
    sync::{oneshot, watch},
};
use tracing::info;

use crate::{
    admin::Admin,
    proxy::Proxy,
    publish::{RoutePublisher, RouteReader},
    server::{self, ConnInfo, Connections, Security},
    tls::{self, TlsAcceptor},
    upstream::UpstreamClients,
};

/// The options [`DataplaneOptions`] gathers, and the metrics a caller registers beside its own.
pub use crate::{
    headers::AllowedUpgrades,
    metrics::{MetricsOptions, ProxyMetrics, gauge_value, register},
    proxy::ProxyOptions,
    server::tunnel::Tunnels,
    server::{ServerOptions, metrics::ServerMetrics},
    tls::{RootCertStore, client_config, roots_from_pem},
    upstream::ClientOptions,
};
pub use prometheus_client::registry::Registry;

/// For `benches/` and `proxy/tests/`, which measure and drive the parts on their own: not an
/// API. The controller uses the options above, [`crate::publish`] and the contract only.
#[doc(hidden)]
pub mod internals {
    pub use crate::{
        headers::{AddedFields, ForwardedContext, drop_underscored, set_forwarded, strip_hop_by_hop},
        metrics::{RouteStats, UpstreamStats},
        proxy::{Proxy, count},
        request::normalize_path,
        routes::{RequestFacts, Route, RouteTable},
        server::http1::{head, response},
        upstream::{
            Upstream, UpstreamClients,
            h1::{Framing, encode_head, parse_head},
        },
    };

    /// The accept loop, as the proxy's own listeners run it.
    pub mod server {
        pub use crate::server::{Connections, Security, serve};
    }
}

/// Connections the admin listener (probes, scrapes) may have open at once.
const ADMIN_MAX_CONNECTIONS: usize = 256;

/// The pieces a route source needs to publish, and the listeners need to serve.
pub struct Dataplane {
    pub publisher: RoutePublisher,
    pub reader: RouteReader,
    pub metrics: ProxyMetrics,
}

/// Where and how to serve; built by the caller from its flags.
#[derive(Clone, Debug)]
pub struct DataplaneOptions {
    pub http_addr: SocketAddr,
    pub https_addr: SocketAddr,
    pub admin_addr: SocketAddr,
    /// Proxy worker threads. Must be at least 1.
    pub workers: usize,
    pub server: ServerOptions,
    pub client: ClientOptions,
    /// Its `tunnels` are replaced by the ones all workers share.
    pub proxy: ProxyOptions,
    /// An upgraded connection quiet in both directions for this long is closed.
    pub tunnel_idle_timeout: Duration,
    /// Extra listeners, by the Gateway listener port they serve (`--gateway-port`): each serves
    /// only that port's hosts (`TableSpec::ports`), over plain HTTP or TLS as each connection
    /// opens (`server::Security::Either`), for the port's HTTP and HTTPS listeners.
    pub gateway_ports: Vec<(u16, SocketAddr)>,
}

/// Resolves once SIGTERM or SIGINT arrives; clone it into every task that must stop.
#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

/// Bound listeners, ready to serve; see [`Dataplane::bind`].
pub struct Bound {
    /// Each worker with its clones of the HTTP and HTTPS listening sockets.
    workers: Vec<(Worker, Listening)>,
    reader: RouteReader,
    admin_listener: TcpListener,
    admin_options: ServerOptions,
    admin_connections: Connections,
}

/// What each proxy worker thread needs; it builds its own `Proxy` (and pools) from it.
#[derive(Clone)]
struct Worker {
    reader: RouteReader,
    metrics: ProxyMetrics,
    client_options: ClientOptions,
    proxy_options: ProxyOptions,
    server_options: ServerOptions,
    connections: Connections,
    acceptor: TlsAcceptor,
}

/// A worker's HTTP and HTTPS listening sockets, and its extra ports' by Gateway port.
type Listening = (
    std::net::TcpListener,
    std::net::TcpListener,
    Vec<(u16, std::net::TcpListener)>,
);

// === impl Dataplane ===

impl Dataplane {
    /// Registers the proxy's metrics in `registry`; the caller adds its own before serving.
    pub fn new(registry: &mut Registry, options: MetricsOptions) -> Self {
        let metrics = ProxyMetrics::register_with(registry, options);
        crate::limits::register(registry);
        crate::pace::register(registry);
        crate::mirror::register(registry);
        crate::auth::register(registry);
        crate::admin::register(registry);
        let (publisher, reader) = RoutePublisher::new(metrics.clone());
        Dataplane {
            publisher,
            reader,
            metrics,
        }
    }

    /// Registers the listeners' metrics and binds the listeners, failing fast on a taken port.
    pub async fn bind(
        options: DataplaneOptions,
        reader: RouteReader,
        metrics: ProxyMetrics,
        registry: &mut Registry,
    ) -> io::Result<Bound> {
        let server_metrics = ServerMetrics::register(registry);
        let admin_metrics = ServerMetrics::register_admin(registry);
        let tunnels = Tunnels::new(options.tunnel_idle_timeout, server_metrics.clone());
        let connections = Connections::new(&options.server, server_metrics, tunnels.clone());
        let http = server::bind_std(options.http_addr)?;
        let https = server::bind_std(options.https_addr)?;
        let mut ports = Vec::with_capacity(options.gateway_ports.len());
        for &(port, addr) in &options.gateway_ports {
            let listener = server::bind_std(addr)?;
            let name = format!("gateway:{port}");
            info!(listener = %name, addr = %listener.local_addr()?, "Listening");
            ports.push((port, listener));
        }
        let admin_listener = server::bind(options.admin_addr).await?;
        let workers = options.workers;
        info!(listener = "http", addr = %http.local_addr()?, workers, "Listening");
        info!(listener = "https", addr = %https.local_addr()?, workers, "Listening");
        info!(listener = "admin", addr = %admin_listener.local_addr()?, "Listening");
        let worker = Worker {
            reader: reader.clone(),
            metrics,
            client_options: options.client,
            proxy_options: ProxyOptions {
                tunnels,
                ..options.proxy
            },
            server_options: options.server.clone(),
            connections,
            acceptor: tls::acceptor(reader.certificate_resolver(tls::self_signed())),
        };
        let workers = (0..workers)
            .map(|_| {
                let ports = (ports.iter())
                    .map(|(port, listener)| Ok((*port, listener.try_clone()?)))
                    .collect::<io::Result<_>>()?;
                Ok((worker.clone(), (http.try_clone()?, https.try_clone()?, ports)))
            })
            .collect::<io::Result<_>>()?;
        let admin_options = ServerOptions {
            drain_timeout: Duration::from_secs(1),
            // Its own small budget, apart from the proxy's: a flood of clients never locks out probes.
            max_connections: ADMIN_MAX_CONNECTIONS,
            ..options.server
        };
        Ok(Bound {
            workers,
            reader,
            admin_connections: Connections::new(&admin_options, admin_metrics, Tunnels::default()),
            admin_listener,
            admin_options,
        })
    }
}

// === impl Bound ===

impl Bound {
    /// Serves until `shutdown`, then drains; `registry` is what the admin listener's `/metrics`
    /// shows, complete by now.
    pub async fn serve(self, registry: Registry, shutdown: Shutdown) -> io::Result<()> {
        let mut finished_workers = Vec::with_capacity(self.workers.len());
        for (index, (worker, listening)) in self.workers.into_iter().enumerate() {
            let (done, finished) = oneshot::channel();
            let shutdown = shutdown.clone();
            std::thread::Builder::new()
                .name(format!("shunt-proxy-{index}"))
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                    let result = match runtime {
                        Ok(runtime) => runtime.block_on(worker.serve(listening, shutdown)),
                        Err(error) => Err(error),
                    };
                    let _ = done.send(result);
                })?;
            finished_workers.push(finished);
        }
        let admin = Admin::new(self.reader, Arc::new(registry));
        let admin_server = server::serve(
            self.admin_listener,
            &self.admin_options,
            &self.admin_connections,
            None,
            move |req, _conn| {
                let admin = admin.clone();
                async move { admin.serve(req).await }
            },
            shutdown.requested(),
        );
        admin_server.await?;
        for finished in finished_workers {
            // A worker that panicked dropped its sender: its connections are gone either way.
            finished.await.unwrap_or(Ok(()))?;
        }
        info!("Stopped");
        Ok(())
    }
}

// === impl Worker ===

impl Worker {
    /// Serves both proxy listeners on the current runtime until shutdown, then drains.
    async fn serve(self, (http, https, ports): Listening, shutdown: Shutdown) -> io::Result<()> {
        let (http, https) = (TcpListener::from_std(http)?, TcpListener::from_std(https)?);
        let clients = UpstreamClients::new(&self.client_options);
        let proxy = Proxy::new(self.reader, clients, self.proxy_options, self.metrics);
        let handler = move |req, conn| proxy.clone().serve(req, conn);
        let (options, connections) = (&self.server_options, &self.connections);
        let plain = server::serve(
            http,
            options,
            connections,
            None,
            handler.clone(),
            shutdown.clone().requested(),
        );
        let mut extra = Vec::with_capacity(ports.len());
        for (port, listener) in ports {
            let handler = handler.clone();
            // Its requests carry the port: routes are looked up among that port's hosts only.
            let handler = move |req, conn: ConnInfo| {
                handler(
                    req,
                    ConnInfo {
                        port: Some(port),
                        ..conn
                    },
                )
            };
            let listener = TcpListener::from_std(listener)?;
            extra.push(server::serve(
                listener,
                options,
                connections,
                Security::Either(self.acceptor.clone()),
                handler,
                shutdown.clone().requested(),
            ));
        }
        let tls = server::serve(
            https,
            options,
            connections,
            Some(self.acceptor),
            handler,
            shutdown.requested(),
        );
        tokio::try_join!(plain, tls, futures::future::try_join_all(extra))?;
        Ok(())
    }
}

// === impl Shutdown ===

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
