//! `shunt demo`: four example "pods" on 127.0.0.11-14:3000 and the bundled manifests that
//! route to them, so the whole path can be tried with curl and no cluster.

use std::{
    convert::Infallible,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use bytes::Bytes;
use clap::Args;
use http::{Request, Response, header};
use http_body_util::Full;
use hyper::{body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use tokio::net::TcpListener;
use tracing::{debug, info};

use super::{LogArgs, ProxyArgs};
use crate::{
    cmd::dataplane::Shutdown,
    compile::CompileOptions,
    manifests::{self, ManifestWatcher},
};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Serve these manifests instead of the bundled ones (try `examples/demo` and edit it live).
    #[arg(long = "manifests", value_name = "PATH")]
    pub manifests: Vec<PathBuf>,
    /// Only start the example backends.
    #[arg(long)]
    pub backends_only: bool,
    #[command(flatten)]
    pub proxy: ProxyArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

pub const DEMO_MANIFESTS: [(&str, &str); 3] = [
    (
        "examples/demo/shop.yaml",
        include_str!("../../../examples/demo/shop.yaml"),
    ),
    (
        "examples/demo/blog.yaml",
        include_str!("../../../examples/demo/blog.yaml"),
    ),
    (
        "examples/demo/shop-tls.yaml",
        include_str!("../../../examples/demo/shop-tls.yaml"),
    ),
];

/// The demo pods: address and the Service they belong to.
pub const DEMO_PODS: [(&str, &str); 4] = [
    ("127.0.0.11:3000", "web"),
    ("127.0.0.12:3000", "web"),
    ("127.0.0.13:3000", "api"),
    ("127.0.0.14:3000", "blog"),
];

/// Starts the demo pods, then serves the bundled manifests (or `--manifests`) to them.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    for (addr, service) in DEMO_PODS {
        let addr: SocketAddr = addr.parse().expect("demo pod addresses are valid");
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("binding demo pod {addr}: {e}"))?;
        tokio::spawn(serve_pod(listener, service));
    }
    info!(pods = ?DEMO_PODS.map(|(addr, _)| addr), "Demo pods listening");
    if args.backends_only {
        Shutdown::on_signals().requested().await;
        return Ok(());
    }
    let watcher = if args.manifests.is_empty() {
        let mut objects = Vec::new();
        for (origin, text) in DEMO_MANIFESTS {
            objects.extend(manifests::parse_documents(text, Path::new(origin))?);
        }
        ManifestWatcher::with_fixed(objects)
    } else {
        ManifestWatcher::new(args.manifests)?
    };
    let port = args.proxy.http_addr.port();
    info!("Try: curl -H 'Host: shop.example.com' localhost:{port}/api/orders");
    info!("     curl -H 'Host: www.blog.example.com' localhost:{port}/");
    super::serve::serve_manifests(
        watcher,
        &args.proxy,
        CompileOptions::default(),
        std::time::Duration::from_millis(250),
    )
    .await
}

async fn serve_pod(listener: TcpListener, service: &'static str) {
    let pod = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let pod = pod.clone();
        tokio::spawn(async move {
            let answer = service_fn(move |req: Request<Incoming>| {
                let body = describe(service, &pod, &req);
                async move {
                    let mut response = Response::new(Full::new(Bytes::from(body)));
                    response
                        .headers_mut()
                        .insert(header::CONTENT_TYPE, "text/plain".parse().expect("valid"));
                    Ok::<_, Infallible>(response)
                }
            });
            if let Err(error) = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), answer)
                .await
            {
                debug!(%error, "Demo pod connection ended");
            }
        });
    }
}

fn describe(service: &str, pod: &str, req: &Request<Incoming>) -> String {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_string()
    };
    format!(
        "service={service} pod={pod} host={} path={} x-forwarded-for={} x-request-id={}\n",
        header("host"),
        req.uri(),
        header("x-forwarded-for"),
        header("x-request-id"),
    )
}
