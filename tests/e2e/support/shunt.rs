//! `shunt serve` over a manifests directory, started by the common launcher
//! (`tests/common/launch.rs`), with the end-to-end clients one call away.
//!
//! ```text
//! Launch::new("serve") --manifests DIR ─▶ Process (logs, signals, exit) ─▶ /readyz 200
//!    └ Shunt: http, https, admin ─▶ get/send/send_h2, admin /routes /metrics
//! ```

use std::{net::SocketAddr, path::Path};

use http::{Request, StatusCode};
use serde_json::Value;

use super::common::launch::{Launch, Process, deref_process};
use super::{Body, BoxError, Reply, collect, get, send_h1, send_h2};

/// A running `shunt serve`; killed when dropped. Its [`Process`] (logs, pid, signals, exit)
/// is one deref away.
pub struct Shunt {
    process: Process,
    /// The proxy listener.
    pub http: SocketAddr,
    /// The TLS proxy listener.
    pub https: SocketAddr,
    pub admin: SocketAddr,
}

// === impl Shunt ===

impl Shunt {
    /// `shunt serve --manifests <manifests>` on loopback port 0 with JSON logs, plus `args`;
    /// returns once `/readyz` answers 200.
    pub async fn start(manifests: &Path, args: &[&str]) -> Shunt {
        Self::start_listening(manifests, args, &["http", "https", "admin"]).await
    }

    /// [`Shunt::start`] awaiting `listeners` (which must include `http`, `https` and `admin`):
    /// an extra port's is `gateway:PORT` (`--gateway-port`), reached at `addr("gateway:PORT")`.
    pub async fn start_listening(manifests: &Path, args: &[&str], listeners: &'static [&'static str]) -> Shunt {
        Self::start_launched(Launch::new("serve"), manifests, args, listeners).await
    }

    /// [`Shunt::start_listening`] from `launch` (`shunt serve`, perhaps of another executable).
    pub async fn start_launched(
        launch: Launch,
        manifests: &Path,
        args: &[&str],
        listeners: &'static [&'static str],
    ) -> Shunt {
        let process = launch
            .arg("--manifests")
            .arg(manifests)
            .args(args)
            .listeners(listeners)
            .spawn()
            .await;
        process.wait_ready().await;
        Shunt {
            http: process.addr("http"),
            https: process.addr("https"),
            admin: process.addr("admin"),
            process,
        }
    }

    /// `GET path` with `Host: host` over HTTP/1.1.
    pub async fn get(&self, host: &str, path: &str) -> Reply {
        self.send(get(host, path)).await
    }

    /// Sends over HTTP/1.1 and collects the answer; panics when there is none.
    pub async fn send(&self, req: Request<Body>) -> Reply {
        let what = format!("{} {} (Host {:?})", req.method(), req.uri(), req.headers().get("host"));
        self.try_send(req)
            .await
            .unwrap_or_else(|error| panic!("{what} through shunt failed: {error}"))
    }

    /// Sends over HTTP/1.1 to another of its listeners (`addr`).
    pub async fn send_at(&self, addr: SocketAddr, req: Request<Body>) -> Reply {
        let what = format!("{} {} at {addr}", req.method(), req.uri());
        let sent = async { collect(send_h1(addr, req).await?).await };
        sent.await
            .unwrap_or_else(|error: BoxError| panic!("{what} through shunt failed: {error}"))
    }

    pub async fn try_send(&self, req: Request<Body>) -> Result<Reply, BoxError> {
        collect(send_h1(self.http, req).await?).await
    }

    /// Sends over HTTP/2 prior knowledge; the URI must be absolute (`http://host/path`).
    pub async fn send_h2(&self, req: Request<Body>) -> Reply {
        let what = format!("{} {}", req.method(), req.uri());
        let sent = async { collect(send_h2(self.http, req).await?).await };
        sent.await
            .unwrap_or_else(|error: BoxError| panic!("HTTP/2 {what} through shunt failed: {error}"))
    }

    pub async fn admin(&self, path: &str) -> Reply {
        self.try_admin(path)
            .await
            .unwrap_or_else(|error| panic!("GET {path} on the admin listener failed: {error}"))
    }

    pub async fn try_admin(&self, path: &str) -> Result<Reply, BoxError> {
        collect(send_h1(self.admin, get("localhost", path)).await?).await
    }

    /// `/routes` as JSON.
    pub async fn routes(&self) -> Value {
        self.admin("/routes").await.json()
    }

    /// `/metrics` as text.
    pub async fn metrics(&self) -> String {
        let reply = self.admin("/metrics").await;
        assert_eq!(reply.status, StatusCode::OK, "/metrics: {}", reply.text());
        reply.text()
    }
}

deref_process!(Shunt);
