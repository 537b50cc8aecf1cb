//! A real nginx for one case: configuration files in a temporary prefix, the process run
//! unprivileged in the foreground on ports the test picked, stopped when dropped.
//!
//! ```text
//! conf/nginx.conf + conf/location.conf + case servers + upstreams + certificates ─▶ tempdir
//!   nginx -p tempdir -c tempdir/nginx.conf -e stderr -g 'daemon off; pid …;' ─▶ both ports accept
//! ```

use std::{
    io::Write as _,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU16, Ordering},
    },
    time::Duration,
};

use tempfile::TempDir;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use crate::support::Leaf;

/// Setting this makes a missing nginx fail the suite instead of skipping it (tests/run.sh does).
pub const REQUIRE: &str = "SHUNT_REQUIRE_NGINX";

const MAIN_CONF: &str = include_str!("conf/nginx.conf");
const LOCATION_CONF: &str = include_str!("conf/location.conf");
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A running nginx; stopped (TERM, then KILL) when dropped.
pub struct Nginx {
    child: Child,
    pub http: SocketAddr,
    pub https: SocketAddr,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Holds the configuration, certificates and temporary paths while nginx runs.
    _prefix: TempDir,
}

/// What one nginx serves: the case's servers, its upstreams and its certificates by file stem.
pub struct NginxConfig<'a> {
    /// `server` blocks; `@HTTP@` and `@HTTPS@` stand for the listen addresses.
    pub servers: &'a str,
    /// `upstream` blocks, one per Service port.
    pub upstreams: String,
    /// `<stem>.crt` / `<stem>.key` pairs written beside the configuration.
    pub certificates: Vec<(String, &'a Leaf)>,
}

/// The nginx binary: `nginx` on `PATH`, else Debian's `/usr/sbin/nginx`. `None` after saying,
/// once and past libtest's capture, that the suite is skipped; panics instead when [`REQUIRE`]
/// is set.
pub fn binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nginx"))
            .find(|path| path.is_file())
    });
    let found = on_path.or_else(|| Some(PathBuf::from("/usr/sbin/nginx")).filter(|path| path.is_file()));
    if found.is_none() {
        assert!(
            std::env::var_os(REQUIRE).is_none(),
            "{REQUIRE} is set but there is no nginx (install Debian's nginx-light)"
        );
        say_skipped();
    }
    found
}

fn say_skipped() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let line =
            "skipped: the nginx differential suite (no nginx on PATH or at /usr/sbin/nginx); see docs/testing.md\n";
        let _ = std::io::stderr().write_all(line.as_bytes());
    });
}

// === impl Nginx ===

impl Nginx {
    /// Writes the configuration and starts nginx; a port another process took between picking
    /// and binding gets one more try with new ports.
    pub async fn start(binary: &Path, config: &NginxConfig<'_>) -> Nginx {
        let mut last_error = String::new();
        for _ in 0..3 {
            match Nginx::try_start(binary, config).await {
                Ok(nginx) => return nginx,
                Err(error) => last_error = error,
            }
        }
        panic!("nginx did not start:\n{last_error}");
    }

    async fn try_start(binary: &Path, config: &NginxConfig<'_>) -> Result<Nginx, String> {
        let prefix = tempfile::tempdir().expect("creating nginx's prefix directory");
        let (http, https) = (free_port(), free_port());
        write_prefix(prefix.path(), config, http, https);
        let dir = prefix.path().display().to_string();
        let mut child = Command::new(binary)
            .args([
                "-p",
                &format!("{dir}/"),
                "-c",
                &format!("{dir}/nginx.conf"),
                "-e",
                "stderr",
            ])
            .args(["-g", &format!("daemon off; pid {dir}/nginx.pid;")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| format!("spawning {}: {error}", binary.display()))?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (pipe, sink) = (child.stderr.take().expect("stderr is piped"), stderr.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().expect("stderr lock").push(line);
            }
        });
        let mut nginx = Nginx {
            child,
            http,
            https,
            stderr,
            _prefix: prefix,
        };
        nginx.wait_until_accepting().await?;
        Ok(nginx)
    }

    async fn wait_until_accepting(&mut self) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("polling nginx") {
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(format!("nginx exited with {status}: {}", self.stderr()));
            }
            let http = tokio::net::TcpStream::connect(self.http).await.is_ok();
            let https = tokio::net::TcpStream::connect(self.https).await.is_ok();
            if http && https {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "nginx accepted nothing within {STARTUP_TIMEOUT:?}: {}",
                    self.stderr()
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Everything nginx wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").join("\n")
    }
}

impl Drop for Nginx {
    /// TERM lets the master stop its worker; KILL (kill_on_drop) only if it has not after 2 s,
    /// so no worker outlives the test holding its ports.
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            for _ in 0..100 {
                if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

fn write_prefix(dir: &Path, config: &NginxConfig<'_>, http: SocketAddr, https: SocketAddr) {
    let listen = |text: &str| {
        text.replace("@HTTP@", &http.to_string())
            .replace("@HTTPS@", &https.to_string())
    };
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap_or_else(|error| panic!("writing nginx's {name}: {error}"))
    };
    write("nginx.conf", &listen(MAIN_CONF));
    write("location.conf", LOCATION_CONF);
    write("case.conf", &listen(config.servers));
    write("upstreams.conf", &config.upstreams);
    for (stem, leaf) in &config.certificates {
        write(&format!("{stem}.crt"), &leaf.chain_pem);
        write(&format!("{stem}.key"), &leaf.key_pem);
    }
}

/// A loopback port free right now, which nginx binds a moment later. It is taken below the
/// kernel's ephemeral range (32768 and up), so the other tests' port-0 listeners and outgoing
/// connections cannot take it in between; nginx instances take turns through one counter.
fn free_port() -> SocketAddr {
    const FIRST: u16 = 20_000;
    const SPAN: u16 = 12_000;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let start = (std::process::id() % u32::from(SPAN)) as u16;
    for _ in 0..SPAN {
        let offset = start.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % SPAN;
        if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", FIRST + offset)) {
            return listener.local_addr().expect("a bound listener has an address");
        }
    }
    panic!("no free loopback port in {FIRST}..{}", FIRST + SPAN);
}
