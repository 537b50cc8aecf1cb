//! The real `shunt run` binary as a child process, pointed at the fake API server: started on
//! loopback port 0, its JSON log lines collected, its proxy and admin listeners one call away.
//!
//! ```text
//! spawn `shunt run --kubeconfig <dir>/kubeconfig-<identity>.yaml` ─stderr─▶ log lines
//!    └ "Listening" lines give the ports ─▶ /readyz ─▶ requests (one at a time, or a Load)
//! ```

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::TokioExecutor,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
    sync::watch,
    task::JoinHandle,
};

use super::{ApiServer, eventually};

/// Starting (both listeners) and the first table must each fit in this.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// One request through the proxy.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// The address `--publish-status-address` gives every replica started without `--publish-service`.
pub const STATUS_ADDRESS: &str = "203.0.113.7";

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A running `shunt run`; killed when dropped.
pub struct Shunt {
    pub identity: String,
    child: Child,
    pub http: SocketAddr,
    pub admin: SocketAddr,
    logs: Arc<Mutex<Vec<String>>>,
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
    /// `shunt run` as replica `identity` (its Lease identity and its API token), returning once
    /// both listeners are up: routes may not be published yet.
    pub async fn spawn(api: &ApiServer, dir: &Path, identity: &str, args: &[&str]) -> Shunt {
        let kubeconfig = api.kubeconfig(dir, identity);
        Shunt::spawn_with(kubeconfig, "shunt-system", identity, args, Some(STATUS_ADDRESS)).await
    }

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
        let mut command = Command::from(super::launch::shunt());
        command
            .arg("run")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args([
                "--http-addr",
                "127.0.0.1:0",
                "--https-addr",
                "127.0.0.1:0",
                "--admin-addr",
                "127.0.0.1:0",
                "--log-format",
                "json",
            ])
            .args(["--pod-name", identity, "--pod-namespace", namespace])
            .args(match status {
                Some(address) if !args.contains(&"--publish-service") => vec!["--publish-status-address", address],
                _ => Vec::new(),
            })
            .args(["--access-log", "false", "--threads", "1"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawning the shunt binary");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let sink = logs.clone();
        // Keep draining stderr for the whole run: a full pipe would block shunt's logging.
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().expect("log lock").push(line);
            }
        });
        let client = Client::builder(TokioExecutor::new()).build_http();
        let unbound = SocketAddr::from(([127, 0, 0, 1], 0));
        let mut shunt = Shunt {
            identity: identity.to_string(),
            child,
            http: unbound,
            admin: unbound,
            logs,
            client,
        };
        let deadline = tokio::time::Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = shunt.child.try_wait().expect("polling the shunt process") {
                panic!(
                    "shunt {identity} exited during startup with {status}; logs:\n{}",
                    shunt.logs().join("\n")
                );
            }
            if let (Some(http), Some(admin)) = (shunt.listening("http"), shunt.listening("admin")) {
                (shunt.http, shunt.admin) = (http, admin);
                return shunt;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "shunt {identity} did not log both Listening lines"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// [`Shunt::spawn`], then waits for the first route table.
    pub async fn start(api: &ApiServer, dir: &Path, identity: &str, args: &[&str]) -> Shunt {
        let shunt = Shunt::spawn(api, dir, identity, args).await;
        shunt.wait_ready().await;
        shunt
    }

    pub async fn wait_ready(&self) {
        eventually("shunt's /readyz to answer 200", STARTUP_TIMEOUT, async || {
            (self.readyz().await == Some(StatusCode::OK)).then_some(())
        })
        .await;
    }

    /// The status of `GET /readyz` on the admin listener, if it answers.
    pub async fn readyz(&self) -> Option<StatusCode> {
        self.request(self.admin, "localhost", "/readyz")
            .await
            .ok()
            .map(|reply| reply.status)
    }

    /// The value of an unlabelled metric on `/metrics` (e.g. `shunt_leader`), if it answers.
    pub async fn metric(&self, name: &str) -> Option<f64> {
        let reply = self.request(self.admin, "localhost", "/metrics").await.ok()?;
        reply.body.lines().find_map(|line| {
            let (metric, value) = line.split_once(' ')?;
            (metric == name).then(|| value.trim().parse().ok()).flatten()
        })
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

    /// SIGKILL: no chance to release anything. Returns when it is gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("killing shunt");
    }

    /// SIGTERM, as the kubelet sends first: shunt drains and releases what it holds.
    pub fn terminate(&self) {
        let pid = self.child.id().expect("shunt is running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -TERM {pid}: {status}");
    }

    /// Waits (bounded) for the process to exit.
    pub async fn exited(&mut self, within: Duration) -> std::process::ExitStatus {
        tokio::time::timeout(within, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("shunt {} still running after {within:?}", self.identity))
            .expect("waiting for shunt")
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

    fn listening(&self, listener: &str) -> Option<SocketAddr> {
        self.json_logs().into_iter().find_map(|line| {
            (line["message"] == "Listening" && line["listener"] == listener)
                .then(|| line["addr"].as_str()?.parse().ok())
                .flatten()
        })
    }

    /// The process id, for reading its memory from /proc.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub fn logs(&self) -> Vec<String> {
        self.logs.lock().expect("log lock").clone()
    }

    pub fn json_logs(&self) -> Vec<Value> {
        self.logs()
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }
}

impl Drop for Shunt {
    /// A failing test shows what shunt said.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let logs = self.logs();
            let tail = &logs[logs.len().saturating_sub(40)..];
            eprintln!(
                "--- last {} log lines of shunt {} ---\n{}",
                tail.len(),
                self.identity,
                tail.join("\n")
            );
        }
    }
}

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
