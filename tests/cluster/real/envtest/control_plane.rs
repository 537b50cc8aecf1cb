//! A real etcd and kube-apiserver on free loopback ports with a fresh data directory, the way
//! controller-runtime's envtest runs them: no kubelet, controller manager or scheduler.
//!
//! ```text
//! ControlPlane::start ─▶ Pki (CA, serving cert, SA key, admin token) ─▶ etcd ─▶ kube-apiserver ─▶ /readyz
//!   └ kubeconfig(dir, name, token) for `shunt run` and the tests' own client
//! ```

use std::{
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, Instant},
};

use super::{Binaries, Guarded, Pki};

/// etcd and kube-apiserver each answer within this after starting (seconds on 2 cores).
const STARTUP: Duration = Duration::from_secs(60);

/// A running control plane; both programs are killed by pid when it is dropped.
pub struct ControlPlane {
    pub dir: tempfile::TempDir,
    binaries: Binaries,
    pub pki: Pki,
    pub port: u16,
    etcd_url: String,
    /// Declared before `_etcd`: the API server goes first.
    apiserver: Mutex<Option<Guarded>>,
    /// Held for its `Drop`, which kills etcd.
    _etcd: Guarded,
}

impl ControlPlane {
    /// Starts etcd, then kube-apiserver on it, and waits until the API server is ready.
    pub fn start(binaries: &Binaries) -> ControlPlane {
        let dir = tempfile::Builder::new()
            .prefix("shunt-k8s-")
            .tempdir()
            .expect("a control-plane directory");
        let pki = Pki::create(dir.path());
        let (client, peer, port) = (free_port(), free_port(), free_port());
        let etcd_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let etcd_args = [
            "--name=test".to_string(),
            format!("--data-dir={}", dir.path().join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=test={peer_url}"),
            "--log-level=warn".to_string(),
        ];
        // The shared plane lives in a static, never dropped: etcd's guard removes the directory
        // (about 120 MB of etcd files) when the test binary exits.
        let etcd = Guarded::spawn_removing("etcd", &binaries.etcd(), &etcd_args, dir.path(), Some(dir.path()));
        wait_for(&etcd, STARTUP, || {
            std::fs::read_to_string(&etcd.log).is_ok_and(|log| log.contains("ready on"))
        });
        let plane = ControlPlane {
            binaries: binaries.clone(),
            pki,
            port,
            etcd_url,
            apiserver: Mutex::new(None),
            _etcd: etcd,
            dir,
        };
        plane.start_apiserver();
        plane
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// SIGKILL to kube-apiserver; etcd keeps the data.
    pub fn kill_apiserver(&self) {
        drop(self.apiserver.lock().expect("apiserver lock").take());
    }

    /// A new kube-apiserver on the same port and etcd, once ready.
    pub fn start_apiserver(&self) {
        let pki = &self.pki;
        let path = |p: &PathBuf| p.display().to_string();
        let args = [
            format!("--etcd-servers={}", self.etcd_url),
            "--bind-address=127.0.0.1".to_string(),
            "--advertise-address=127.0.0.1".to_string(),
            format!("--secure-port={}", self.port),
            format!("--tls-cert-file={}", path(&pki.serving_crt)),
            format!("--tls-private-key-file={}", path(&pki.serving_key)),
            format!("--client-ca-file={}", path(&pki.ca_crt)),
            format!("--token-auth-file={}", path(&pki.tokens)),
            "--service-account-issuer=https://kubernetes.default.svc".to_string(),
            format!("--service-account-key-file={}", path(&pki.sa_pub)),
            format!("--service-account-signing-key-file={}", path(&pki.sa_key)),
            "--authorization-mode=RBAC".to_string(),
            "--service-cluster-ip-range=10.96.0.0/16".to_string(),
            "--endpoint-reconciler-type=none".to_string(),
            "--profiling=false".to_string(),
        ];
        let apiserver = Guarded::spawn("kube-apiserver", &self.binaries.apiserver(), &args, self.dir.path());
        let readyz = format!("{}/readyz", self.url());
        wait_for(&apiserver, STARTUP, || {
            ready(&readyz, &self.pki.admin_token, &self.pki.ca_pem)
        });
        *self.apiserver.lock().expect("apiserver lock") = Some(apiserver);
    }

    /// A kubeconfig in `dir` for `user` authenticating with `token`, trusting this cluster's CA.
    pub fn kubeconfig(&self, dir: &Path, user: &str, token: &str) -> PathBuf {
        let path = dir.join(format!("kubeconfig-{user}.yaml"));
        let config = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: real\n\
             clusters:\n- name: real\n  cluster:\n    server: {url}\n    certificate-authority: {ca}\n\
             users:\n- name: {user}\n  user:\n    token: {token}\n\
             contexts:\n- name: real\n  context:\n    cluster: real\n    user: {user}\n    namespace: default\n",
            url = self.url(),
            ca = self.pki.ca_crt.display(),
        );
        std::fs::write(&path, config).expect("writing the kubeconfig");
        path
    }
}

/// A port nothing listens on now (the kernel's next ephemeral one).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a probe port");
    listener.local_addr().expect("a bound address").port()
}

/// Polls `ready` every 100 ms; panics with the program's log if it exits or `within` passes.
fn wait_for(program: &Guarded, within: Duration, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(
            program.alive(),
            "{} exited during startup; its log:\n{}",
            program.name,
            program.log_tail(30)
        );
        assert!(
            started.elapsed() < within,
            "{} not ready after {within:?}; its log:\n{}",
            program.name,
            program.log_tail(30)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `GET /readyz` answers 200, asked from a thread of its own: callers may be inside a runtime.
fn ready(url: &str, token: &str, ca_pem: &str) -> bool {
    let (url, token, ca_pem) = (url.to_string(), token.to_string(), ca_pem.to_string());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a probe runtime");
        runtime.block_on(super::kube::readyz(&url, &token, &ca_pem))
    })
    .join()
    .expect("the readiness probe does not panic")
}
