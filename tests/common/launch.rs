//! How every test starts the `shunt` binary: which build, an environment that cannot change the
//! flags the test passes, and the running process (its listeners read from its log, readiness,
//! logs, signals, exit). The tiers add their own flags: `tests/e2e` a manifests directory,
//! `tests/cluster` a kubeconfig and a pod identity.
//!
//! ```text
//! Launch::new("serve" | "run") + tier flags ─spawn─▶ stderr ─▶ log reader task ─▶ lines
//!    └ "Listening" lines give the ports (Process::addr) ─▶ GET /readyz until 200 (wait_ready)
//! ```

use std::{
    ffi::{OsStr, OsString},
    net::SocketAddr,
    process::{ExitStatus, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    net::TcpStream,
    process::{Child, Command},
};

use super::wait::eventually;

/// Variables `shunt` reads as flag values (clap `env`) or to find an API server: a developer's
/// shell must not change what a test runs.
const FLAG_ENV: [&str; 9] = [
    "SHUNT_HTTP_ADDR",
    "SHUNT_HTTPS_ADDR",
    "SHUNT_ADMIN_ADDR",
    "SHUNT_LOG_FORMAT",
    "SHUNT_NODE_NAME",
    "SHUNT_ZONE",
    "POD_NAME",
    "POD_NAMESPACE",
    "KUBECONFIG",
];
/// One `/readyz` request.
const READYZ_TIMEOUT: Duration = Duration::from_secs(2);

/// The binary under test: `SHUNT_BIN` (another build, such as the release build a scale run
/// measures) or the one cargo built for this test.
pub fn binary() -> OsString {
    std::env::var_os("SHUNT_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_shunt").into())
}

/// `shunt` with the flag environment cleared; async callers wrap it in
/// `tokio::process::Command::from`.
pub fn shunt() -> std::process::Command {
    shunt_at(&binary())
}

/// [`shunt`] from the executable at `binary` (a copy of its own, for a test that reads which of
/// its pages are resident: a binary many tests run at once shares its pages between them).
pub fn shunt_at(binary: &OsStr) -> std::process::Command {
    let mut command = std::process::Command::new(binary);
    for name in FLAG_ENV {
        command.env_remove(name);
    }
    command
}

/// A `shunt` command line on its way to a [`Process`].
pub struct Launch {
    command: Command,
    label: String,
    listeners: &'static [&'static str],
    startup: Duration,
}

/// A running `shunt`; killed when dropped.
pub struct Process {
    child: Child,
    pid: u32,
    /// Names the process in failure messages (`shunt`, `shunt replica-0`).
    label: String,
    startup: Duration,
    listeners: Vec<(&'static str, SocketAddr)>,
    logs: Arc<Mutex<Vec<String>>>,
}

// === impl Launch ===

impl Launch {
    /// `shunt SUBCOMMAND` with every listener on loopback port 0 and JSON logs at `info`; waits
    /// for the `http` and `admin` listeners, 10 s, unless told otherwise.
    pub fn new(subcommand: &str) -> Launch {
        Launch::new_at(&binary(), subcommand)
    }

    /// [`Launch::new`] with the executable at `binary`.
    pub fn new_at(binary: &OsStr, subcommand: &str) -> Launch {
        let mut command = Command::from(shunt_at(binary));
        command
            .arg(subcommand)
            .args([
                "--http-addr",
                "127.0.0.1:0",
                "--https-addr",
                "127.0.0.1:0",
                "--admin-addr",
                "127.0.0.1:0",
            ])
            .args(["--log-format", "json"])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Launch {
            command,
            label: "shunt".to_string(),
            listeners: &["http", "admin"],
            startup: Duration::from_secs(10),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.command.args(args);
        self
    }

    pub fn label(mut self, label: String) -> Self {
        self.label = label;
        self
    }

    /// The listeners whose `Listening` lines [`Launch::spawn`] waits for.
    pub fn listeners(mut self, listeners: &'static [&'static str]) -> Self {
        self.listeners = listeners;
        self
    }

    /// How long listening, and then the first table, may each take.
    pub fn startup(mut self, startup: Duration) -> Self {
        self.startup = startup;
        self
    }

    /// Spawns the process and returns once every listener logged its address: routes may not be
    /// published yet ([`Process::wait_ready`]).
    pub async fn spawn(mut self) -> Process {
        let mut child = self.command.spawn().expect("spawning the shunt binary");
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
        let mut process = Process {
            child,
            pid,
            label: self.label,
            startup: self.startup,
            listeners: Vec::new(),
            logs,
        };
        let deadline = tokio::time::Instant::now() + self.startup;
        loop {
            if let Some(status) = process.child.try_wait().expect("polling the shunt process") {
                panic!(
                    "{} exited during startup with {status}; logs:\n{}",
                    process.label,
                    process.logs().join("\n")
                );
            }
            let found: Option<Vec<_>> = self
                .listeners
                .iter()
                .map(|name| Some((*name, process.listening(name)?)))
                .collect();
            if let Some(found) = found {
                process.listeners = found;
                return process;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} did not log the Listening lines of {:?}; logs:\n{}",
                process.label,
                self.listeners,
                process.logs().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

// === impl Process ===

impl Process {
    /// The address `listener` (`http`, `https`, `admin`) logged, if the launch waited for it.
    pub fn addr(&self, listener: &str) -> SocketAddr {
        self.listeners
            .iter()
            .find_map(|(name, addr)| (*name == listener).then_some(*addr))
            .unwrap_or_else(|| panic!("{}: no {listener} listener was awaited", self.label))
    }

    /// The address of a `"Listening"` log line for `listener`.
    fn listening(&self, listener: &str) -> Option<SocketAddr> {
        self.json_logs().into_iter().find_map(|line| {
            (line["message"] == "Listening" && line["listener"] == listener)
                .then(|| line["addr"].as_str()?.parse().ok())
                .flatten()
        })
    }

    /// Waits (within the startup time) for `/readyz` to answer 200: the first table is served.
    pub async fn wait_ready(&self) {
        eventually("shunt's /readyz to answer 200", self.startup, async || {
            (self.readyz().await == Some(StatusCode::OK)).then_some(())
        })
        .await;
    }

    /// The status of `GET /readyz` on the admin listener, if it answers.
    pub async fn readyz(&self) -> Option<StatusCode> {
        let exchange = async {
            let stream = TcpStream::connect(self.addr("admin")).await.ok()?;
            let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.ok()?;
            tokio::spawn(connection);
            let req = Request::get("/readyz")
                .header(header::HOST, "localhost")
                .body(Empty::<Bytes>::new())
                .ok()?;
            Some(sender.send_request(req).await.ok()?.status())
        };
        tokio::time::timeout(READYZ_TIMEOUT, exchange).await.ok().flatten()
    }

    /// The process id (for `/proc`, or signals), kept after it exits.
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

    /// SIGTERM, as the kubelet sends first: shunt drains and releases what it holds.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// SIGKILL: no chance to release anything. Returns when it is gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("killing shunt");
    }

    /// Waits for the process to exit, failing the test after `within`.
    pub async fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(status) => status.expect("waiting for shunt"),
            Err(_) => panic!(
                "{} did not exit within {within:?}; logs:\n{}",
                self.label,
                self.logs().join("\n")
            ),
        }
    }
}

impl Drop for Process {
    /// A failing test shows what shunt said.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let logs = self.logs();
            let tail = &logs[logs.len().saturating_sub(40)..];
            eprintln!(
                "--- last {} log lines of {} ---\n{}",
                tail.len(),
                self.label,
                tail.join("\n")
            );
        }
    }
}

/// Gives a tier's wrapper of [`Process`] (a struct with a `process` field) the process's
/// methods (logs, pid, signals, exit, readiness) by deref.
macro_rules! deref_process {
    ($wrapper:ty) => {
        impl std::ops::Deref for $wrapper {
            type Target = Process;

            fn deref(&self) -> &Process {
                &self.process
            }
        }

        impl std::ops::DerefMut for $wrapper {
            fn deref_mut(&mut self) -> &mut Process {
                &mut self.process
            }
        }
    };
}
pub(crate) use deref_process;

/// The value of the first sample of `name` whose labels include every `labels` pair.
pub fn sample(metrics: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    metrics.lines().filter(|line| !line.starts_with('#')).find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric, label_text) = series.split_once('{').unwrap_or((series, ""));
        let wanted = metric == name && labels.iter().all(|(k, v)| label_text.contains(&format!("{k}=\"{v}\"")));
        if wanted { value.parse().ok() } else { None }
    })
}
