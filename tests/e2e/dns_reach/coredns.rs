//! Real CoreDNS processes for the DNS tests: the binary found the way the real control-plane
//! tier finds its programs (`$KUBEBUILDER_ASSETS`, then `.k8s-bin/`, which `tests/install.sh`
//! unpacks), else unpacked here from `../shared/k8s/coredns.xz`; each process on its own
//! loopback port, killed when dropped.

use std::{
    io::Write as _,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    sync::OnceLock,
    time::Duration,
};

use shunt_controller::dns::resolve::{exchange, wire};
use tokio::process::{Child, Command};

/// The CoreDNS binary, or `None` (said once on stderr) when there is none to run.
pub fn binary() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let found = find().or_else(unpack);
            if found.is_none() {
                let line = "skipped: the real-CoreDNS tests (no coredns in $KUBEBUILDER_ASSETS or .k8s-bin, no ../shared/k8s/coredns.xz)\n";
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
            found
        })
        .as_deref()
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn find() -> Option<PathBuf> {
    let assets = std::env::var_os("KUBEBUILDER_ASSETS").map(PathBuf::from);
    [assets, Some(repository().join(".k8s-bin"))]
        .into_iter()
        .flatten()
        .map(|dir| dir.join("coredns"))
        .find(|path| path.is_file())
}

/// `xz -dc ../shared/k8s/coredns.xz` into this test target's scratch directory, once.
fn unpack() -> Option<PathBuf> {
    let packed = repository().join("../shared/k8s/coredns.xz");
    if !packed.is_file() {
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = dir.join("coredns");
    if target.is_file() {
        return Some(target);
    }
    let part = dir.join(format!("coredns.{}.part", std::process::id()));
    let file = std::fs::File::create(&part).ok()?;
    let status = std::process::Command::new("xz")
        .arg("-dc")
        .arg(&packed)
        .stdout(file)
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let executable = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
    std::fs::set_permissions(&part, executable).ok()?;
    std::fs::rename(&part, &target).ok()?;
    Some(target)
}

/// A free loopback port (UDP and TCP both bind it; the short race with other tests is benign).
pub fn free_port() -> u16 {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    socket.local_addr().expect("bound").port()
}

/// One running CoreDNS.
pub struct CoreDns {
    pub addr: SocketAddr,
    _child: Child,
    _dir: tempfile::TempDir,
}

impl CoreDns {
    /// Runs `corefile` (its server blocks bind 127.0.0.1 on `port`) with `files` beside it, and
    /// waits until it answers a query for `probe`.
    pub async fn start(binary: &Path, port: u16, corefile: &str, files: &[(&str, &str)], probe: &str) -> CoreDns {
        let dir = tempfile::tempdir().expect("a scratch directory");
        std::fs::write(dir.path().join("Corefile"), corefile).expect("Corefile written");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("file written");
        }
        let child = Command::new(binary)
            .arg("-conf")
            .arg(dir.path().join("Corefile"))
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("coredns starts");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while exchange(addr, probe, wire::A, Duration::from_millis(200))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "CoreDNS on {addr} never answered:\n{corefile}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        CoreDns {
            addr,
            _child: child,
            _dir: dir,
        }
    }
}
