//! The real `shunt` binary as a child process: started on loopback port 0, its JSON log lines
//! collected, its admin endpoints and proxy listener one call away.
//!
//! ```text
//! spawn `shunt serve` ─stderr─▶ log reader task ─▶ lines (tests assert on them)
//!    └ "Listening" lines give the ports ─▶ GET /readyz until 200 ─▶ ready for requests
//! ```

use std::{
    net::SocketAddr,
    path::Path,
    process::{ExitStatus, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use http::{Request, StatusCode};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use super::{Body, BoxError, Reply, collect, eventually, get, send_h1, send_h2};

/// Startup (both listeners and the first table) must fit in this.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `shunt serve`; killed when dropped.
pub struct Shunt {
    child: Child,
    pid: u32,
    /// The proxy listener.
    pub http: SocketAddr,
    /// The TLS proxy listener.
    pub https: SocketAddr,
    pub admin: SocketAddr,
    logs: Arc<Mutex<Vec<String>>>,
}

// === impl Shunt ===

impl Shunt {
    /// `shunt serve --manifests <manifests>` on loopback port 0 with JSON logs, plus `args`;
    /// returns once `/readyz` answers 200.
    pub async fn start(manifests: &Path, args: &[&str]) -> Shunt {
        let mut command = Command::from(super::launch::shunt());
        command
            .arg("serve")
            .arg("--manifests")
            .arg(manifests)
            .args([
                "--http-addr",
                "127.0.0.1:0",
                "--https-addr",
                "127.0.0.1:0",
                "--admin-addr",
                "127.0.0.1:0",
            ])
            .args(["--log-format", "json"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawning the shunt binary");
        let pid = child.id().expect("a just-spawned child has a pid");
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

        let mut shunt = Shunt {
            child,
            pid,
            http: unbound(),
            https: unbound(),
            admin: unbound(),
            logs,
        };
        let deadline = tokio::time::Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = shunt.child.try_wait().expect("polling the shunt process") {
                panic!(
                    "shunt exited during startup with {status}; logs:\n{}",
                    shunt.logs().join("\n")
                );
            }
            let listening = (
                shunt.listening("http"),
                shunt.listening("https"),
                shunt.listening("admin"),
            );
            if let (Some(http), Some(https), Some(admin)) = listening {
                (shunt.http, shunt.https, shunt.admin) = (http, https, admin);
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "shunt did not log all three Listening lines; logs:\n{}",
                shunt.logs().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        eventually("shunt's /readyz to answer 200", remaining, async || {
            let ready = shunt
                .try_admin("/readyz")
                .await
                .is_ok_and(|reply| reply.status == StatusCode::OK);
            ready.then_some(())
        })
        .await;
        shunt
    }

    /// The address of a `"Listening"` log line for `listener`.
    fn listening(&self, listener: &str) -> Option<SocketAddr> {
        self.json_logs().into_iter().find_map(|line| {
            (line["message"] == "Listening" && line["listener"] == listener)
                .then(|| line["addr"].as_str()?.parse().ok())
                .flatten()
        })
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

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Every stderr line so far.
    pub fn logs(&self) -> Vec<String> {
        self.logs.lock().expect("log lock").clone()
    }

    /// The stderr lines that are JSON objects.
    pub fn json_logs(&self) -> Vec<Value> {
        self.logs()
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Waits (bounded) for a JSON log line matching `matches` and returns it.
    pub async fn wait_for_log(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        eventually(what, Duration::from_secs(5), async || {
            self.json_logs().into_iter().find(&matches)
        })
        .await
    }

    /// Sends a signal by name (`TERM`, `INT`) with `kill(1)`.
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid.to_string())
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -{name} {} failed: {status}", self.pid);
    }

    /// Waits for the process to exit, failing the test after `within`.
    pub async fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(status) => status.expect("waiting for shunt"),
            Err(_) => panic!(
                "shunt did not exit within {within:?}; logs:\n{}",
                self.logs().join("\n")
            ),
        }
    }
}

impl Drop for Shunt {
    /// A failing test shows what shunt said.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let logs = self.logs();
            let tail = &logs[logs.len().saturating_sub(40)..];
            eprintln!("--- last {} shunt log lines ---\n{}", tail.len(), tail.join("\n"));
        }
    }
}

fn unbound() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// The value of the first sample of `name` whose labels include every `labels` pair.
pub fn sample(metrics: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    metrics.lines().filter(|line| !line.starts_with('#')).find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric, label_text) = series.split_once('{').unwrap_or((series, ""));
        let wanted = metric == name && labels.iter().all(|(k, v)| label_text.contains(&format!("{k}=\"{v}\"")));
        if wanted { value.parse().ok() } else { None }
    })
}
