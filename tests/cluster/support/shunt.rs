//! `shunt run` against an API server (the in-test one or a real kube-apiserver), started by the
//! common launcher (`tests/common/launch.rs`) with a kubeconfig and a replica identity, and
//! requests through it one at a time or as a background [`Load`].
//!
//! ```text
//! Launch::new("run") --kubeconfig K --pod-name ID ─▶ Process (logs, signals, exit) ─▶ /readyz
//!    └ Shunt: http, admin ─▶ get/backend_for/metric, load(host) ─▶ LoadReport
//! ```

use std::{collections::BTreeMap, net::SocketAddr, path::PathBuf, time::Duration};

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::TokioExecutor,
};
use k8s_openapi::jiff::Timestamp;
use tokio::{sync::watch, task::JoinHandle};

use super::common::{
    backend::BoxError,
    launch::{Launch, Process, deref_process, sample},
};

/// Starting (both listeners) and the first table must each fit in this.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// One request through the proxy.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// The address `--publish-status-address` gives every replica started without `--publish-service`.
pub const STATUS_ADDRESS: &str = "203.0.113.7";

/// A running `shunt run`; killed when dropped. Its [`Process`] (logs, pid, signals, exit,
/// readiness) is one deref away.
pub struct Shunt {
    pub identity: String,
    process: Process,
    pub http: SocketAddr,
    pub admin: SocketAddr,
    client: Client<HttpConnector, Empty<Bytes>>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: String,
}

// === impl Shunt ===

impl Shunt {
    /// `shunt run` as replica `identity` with `kubeconfig`, its Lease in `namespace`, writing
    /// `status` into its Ingresses unless `args` name a `--publish-service` (none: no status
    /// writes), returning once both listeners are up.
    pub async fn spawn_with(
        kubeconfig: PathBuf,
        namespace: &str,
        identity: &str,
        args: &[&str],
        status: Option<&str>,
    ) -> Shunt {
        let process = Launch::new("run")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--pod-name", identity, "--pod-namespace", namespace])
            .args(match status {
                Some(address) if !args.contains(&"--publish-service") => vec!["--publish-status-address", address],
                _ => Vec::new(),
            })
            .args(["--access-log", "false", "--threads", "1"])
            .args(args)
            .label(format!("shunt {identity}"))
            .startup(STARTUP_TIMEOUT)
            .spawn()
            .await;
        Shunt {
            identity: identity.to_string(),
            http: process.addr("http"),
            admin: process.addr("admin"),
            process,
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    /// The value of an unlabelled metric on `/metrics` (e.g. `shunt_leader`), if it answers.
    pub async fn metric(&self, name: &str) -> Option<f64> {
        let reply = self.request(self.admin, "localhost", "/metrics").await.ok()?;
        sample(&reply.body, name, &[])
    }

    /// `GET path` on the admin listener (`/gateway`, `/routes`).
    pub async fn admin_get(&self, path: &str) -> Result<Reply, BoxError> {
        self.request(self.admin, "localhost", path).await
    }

    /// `GET path` with `Host: host` through the proxy.
    pub async fn get(&self, host: &str, path: &str) -> Result<Reply, BoxError> {
        self.request(self.http, host, path).await
    }

    async fn request(&self, addr: SocketAddr, host: &str, path: &str) -> Result<Reply, BoxError> {
        request(&self.client, addr, host, path).await
    }

    /// Which backend answers `GET /` for `host` now (its name), or what went wrong instead.
    pub async fn backend_for(&self, host: &str) -> Result<String, String> {
        match self.get(host, "/").await {
            Ok(reply) if reply.status == StatusCode::OK => Ok(reply.body),
            Ok(reply) => Err(format!("{} {}", reply.status, reply.body.trim())),
            Err(error) => Err(error.to_string()),
        }
    }

    /// Requests `GET /` for `host` one after another (with a short pause) until the load stops.
    pub fn load(&self, host: &str) -> Load {
        let (stop, mut stopped) = watch::channel(false);
        let (client, addr, host) = (self.client.clone(), self.http, host.to_string());
        let task = tokio::spawn(async move {
            let mut report = LoadReport::default();
            while !*stopped.borrow_and_update() {
                match request(&client, addr, &host, "/").await {
                    Ok(reply) if reply.status == StatusCode::OK => {
                        *report.by_backend.entry(reply.body).or_default() += 1
                    }
                    Ok(reply) => report.failed.push(format!("{}: {}", reply.status, reply.body.trim())),
                    Err(error) => report.failed.push(error.to_string()),
                }
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(10)) => {}
                    _ = stopped.changed() => {}
                }
            }
            report
        });
        Load { stop, task }
    }

    /// When this replica led, from its `Leadership changed` log lines: `[from, to)` by the wall
    /// clock, the last one open (`None`) while it still leads.
    pub fn leadership(&self) -> Vec<(Timestamp, Option<Timestamp>)> {
        let mut intervals: Vec<(Timestamp, Option<Timestamp>)> = Vec::new();
        for line in self.json_logs() {
            if line["message"] != "Leadership changed" {
                continue;
            }
            let at: Timestamp = line["timestamp"]
                .as_str()
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("a log line without a timestamp: {line}"));
            match (line["leader"].as_bool(), intervals.last_mut()) {
                (Some(true), None | Some((_, Some(_)))) => intervals.push((at, None)),
                (Some(false), Some((_, end @ None))) => *end = Some(at),
                _ => panic!("shunt {}: leadership changed out of order: {line}", self.identity),
            }
        }
        intervals
    }
}

deref_process!(Shunt);

async fn request(
    client: &Client<HttpConnector, Empty<Bytes>>,
    addr: SocketAddr,
    host: &str,
    path: &str,
) -> Result<Reply, BoxError> {
    let req = Request::get(format!("http://{addr}{path}"))
        .header(header::HOST, host)
        .body(Empty::new())?;
    let exchange = async {
        let response = client.request(req).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok::<_, BoxError>(Reply {
            status,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {REQUEST_TIMEOUT:?}"))?
}

/// Traffic running in the background; see [`Shunt::load`].
pub struct Load {
    stop: watch::Sender<bool>,
    task: JoinHandle<LoadReport>,
}

#[derive(Debug, Default)]
pub struct LoadReport {
    /// Successful answers by backend name.
    pub by_backend: BTreeMap<String, usize>,
    /// What went wrong with each failed request.
    pub failed: Vec<String>,
}

impl Load {
    pub async fn finish(self) -> LoadReport {
        self.stop.send_replace(true);
        let task = tokio::time::timeout(Duration::from_secs(5), self.task);
        task.await
            .expect("the load stops within a request timeout")
            .expect("the load task does not panic")
    }
}

impl LoadReport {
    pub fn succeeded(&self) -> usize {
        self.by_backend.values().sum()
    }
}
