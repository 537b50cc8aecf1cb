//! The real tier: `shunt run` against a real kube-apiserver and etcd (see `control_plane.rs`).
//! One control plane serves the whole test binary; each test gets its own namespace, which
//! shunt watches alone (`--watch-namespace`) and keeps its Lease in (`--pod-namespace`).
//!
//! ```text
//! Real::start ─▶ shared ControlPlane (started once) ─▶ Namespace NS, IngressClass `shunt`
//!   ├ kube: apply/get/list/delete in NS as admin
//!   ├ pod_backend(): origins on 10.244.0.x (the API server refuses loopback endpoints)
//!   └ shunt(): `shunt run --watch-namespace NS --pod-namespace NS`
//! ```

mod binaries;
mod control_plane;
mod crds;
pub mod dns_server;
mod kube;
mod pki;
mod process;

use std::{
    net::{IpAddr, Ipv4Addr},
    path::PathBuf,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU8, Ordering},
    },
};

use serde_json::{Value, json};

pub use self::{
    binaries::{Binaries, say_skipped, skip},
    control_plane::ControlPlane,
    kube::{Kube, client},
    pki::Pki,
    process::Guarded,
};
use super::{Backend, OURS, STATUS_ADDRESS, Shunt, mk_ingress_class};

/// The tier's name in skip lines.
const TIER: &str = "real kube-apiserver tier";
const HOW: &str =
    "no kube-apiserver and etcd in $KUBEBUILDER_ASSETS or .k8s-bin/ (tests/install.sh unpacks ../shared/k8s there)";
/// The controller name of shunt's IngressClass.
pub const CONTROLLER: &str = "shunt.dev/ingress-controller";

/// One test's view of a real cluster.
pub struct Real {
    pub plane: Arc<ControlPlane>,
    /// Admin access to the test's namespace.
    pub kube: Kube,
    pub ns: String,
    pub dir: tempfile::TempDir,
}

impl Real {
    /// A fresh namespace named `prefix-RANDOM` on the binary's shared control plane, or `None`
    /// (after one line saying so) when there are no binaries.
    pub async fn start(prefix: &str) -> Option<Real> {
        let plane = shared()?;
        Some(Real::on(plane, prefix).await)
    }

    /// A control plane of its own, for tests that stop the API server.
    pub async fn start_private(prefix: &str) -> Option<Real> {
        let Some(binaries) = Binaries::find() else {
            skip(TIER, HOW);
            return None;
        };
        let plane = tokio::task::spawn_blocking(move || ControlPlane::start(&binaries))
            .await
            .expect("starting a control plane");
        Some(Real::on(Arc::new(plane), prefix).await)
    }

    /// A fresh namespace on a control plane of the binary's own with the Gateway API standard
    /// CRDs installed (`crds.rs`), so the other tests keep a cluster without them; `None` (after
    /// one line saying so) without binaries or CRDs.
    pub async fn start_with_gateway_api(prefix: &str) -> Option<Real> {
        static PLANE: tokio::sync::OnceCell<Option<Arc<ControlPlane>>> = tokio::sync::OnceCell::const_new();
        let plane = PLANE
            .get_or_init(async || {
                let binaries = Binaries::find()?;
                let crds = crds::standard()?;
                let started = std::thread::spawn(move || ControlPlane::start(&binaries)).join();
                let plane = Arc::new(started.expect("a control plane for the Gateway API tests"));
                let client = client(&plane.url(), &plane.pki.admin_token, &plane.pki.ca_pem);
                crds::install(&client, crds).await;
                Some(plane)
            })
            .await;
        let Some(plane) = plane.clone() else {
            skip(TIER, HOW);
            return None;
        };
        Some(Real::on(plane, prefix).await)
    }

    async fn on(plane: Arc<ControlPlane>, prefix: &str) -> Real {
        let ns = format!("{prefix}-{:06x}", fastrand::u32(..0xff_ffff));
        let client = client(&plane.url(), &plane.pki.admin_token, &plane.pki.ca_pem);
        let kube = Kube {
            client,
            namespace: ns.clone(),
        };
        kube.apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .await;
        kube.apply(mk_ingress_class(OURS, CONTROLLER)).await;
        let dir = tempfile::tempdir().expect("a scratch directory");
        Real { plane, kube, ns, dir }
    }

    /// Applies `object`; a Service's fixed `clusterIP` is dropped so the server allocates one.
    pub async fn apply(&self, mut object: Value) -> Value {
        if object["kind"] == "Service"
            && let Some(spec) = object["spec"].as_object_mut()
        {
            spec.remove("clusterIP");
        }
        self.kube.apply(object).await
    }

    /// The admin kubeconfig, written into the test's directory.
    pub fn kubeconfig(&self) -> PathBuf {
        self.plane
            .kubeconfig(self.dir.path(), "admin", &self.plane.pki.admin_token)
    }

    /// `shunt run` as `identity` with admin rights, once it serves its first table.
    pub async fn shunt(&self, identity: &str, args: &[&str]) -> Shunt {
        self.shunt_as(self.kubeconfig(), identity, args).await
    }

    /// `shunt run` with `kubeconfig`, once it serves its first table.
    pub async fn shunt_as(&self, kubeconfig: PathBuf, identity: &str, args: &[&str]) -> Shunt {
        let shunt = self.spawn_shunt(kubeconfig, identity, args).await;
        shunt.wait_ready().await;
        shunt
    }

    /// `shunt run` with `kubeconfig`, once it listens.
    pub async fn spawn_shunt(&self, kubeconfig: PathBuf, identity: &str, args: &[&str]) -> Shunt {
        let mut all = vec!["--watch-namespace", &self.ns];
        all.extend_from_slice(args);
        Shunt::spawn_with(kubeconfig, &self.ns, identity, &all, Some(STATUS_ADDRESS)).await
    }

    /// `shunt run` with admin rights and no address to publish, so it writes no status (whose
    /// writes would start another compile), once it serves its first table.
    pub async fn shunt_without_status(&self, identity: &str) -> Shunt {
        let args = ["--watch-namespace", &self.ns];
        let shunt = Shunt::spawn_with(self.kubeconfig(), &self.ns, identity, &args, None).await;
        shunt.wait_ready().await;
        shunt
    }

    /// An origin named `name` on a pod address (10.244.0.x), or `None` (after one line saying
    /// so) outside a network namespace that has those addresses.
    pub async fn pod_backend(&self, name: &str) -> Option<Backend> {
        static NEXT: AtomicU8 = AtomicU8::new(0);
        let host = 1 + NEXT.fetch_add(1, Ordering::Relaxed) % 250;
        let ip = IpAddr::V4(Ipv4Addr::new(10, 244, 0, host));
        match Backend::pod(name).on(ip).try_start().await {
            Ok(backend) => Some(backend),
            Err(error) => {
                let why = format!(
                    "cannot bind pod address {ip} ({error}): run the binary inside `unshare -n` with 10.244.0.0/24 local on lo"
                );
                skip("real tier's pod traffic tests", &why);
                None
            }
        }
    }
}

/// The binary's one control plane, started on first use; `None` when there are no binaries.
pub fn shared() -> Option<Arc<ControlPlane>> {
    static SHARED: OnceLock<Option<Arc<ControlPlane>>> = OnceLock::new();
    let plane = SHARED.get_or_init(|| {
        let binaries = Binaries::find()?;
        // Started on a thread of its own: the caller's runtime may have only this thread.
        let started = std::thread::spawn(move || ControlPlane::start(&binaries)).join();
        Some(Arc::new(started.expect("the shared control plane starts")))
    });
    if plane.is_none() {
        skip(TIER, HOW);
    }
    plane.clone()
}

/// An EndpointSlice of `service` with one ready endpoint, `backend`'s address and port.
pub fn mk_pod_slice(namespace: &str, name: &str, service: &str, backend: &Backend) -> Value {
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"namespace": namespace, "name": name, "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": backend.port(), "protocol": "TCP"}],
        "endpoints": [{"addresses": [backend.addr.ip().to_string()], "conditions": {"ready": true, "serving": true, "terminating": false}}],
    })
}
