//! The cluster harness: a fake API server, origins, `shunt run` processes and clients to them.

mod apiserver;
mod backend;
#[path = "../../common/launch.rs"]
pub mod launch;
mod listwatch;
mod objects;
pub mod real;
mod request;
mod shunt;
mod store;
#[path = "../../common/wait.rs"]
mod wait;

use std::time::Duration;

pub use self::{
    apiserver::{ApiServer, Gone, Recorded, Stall},
    backend::Backend,
    objects::{OURS, lb_status, mk_ingress, mk_ingress_class, mk_service, mk_slice},
    shunt::{Load, LoadReport, STATUS_ADDRESS, Shunt},
    wait::{eventually, poll_until},
};

/// A fake API server, a scratch directory for kubeconfigs, and origins behind Services.
pub struct Cluster {
    pub api: ApiServer,
    pub dir: tempfile::TempDir,
    pub backends: Vec<Backend>,
}

impl Cluster {
    /// One origin per name, each behind a Service of that name in `shop` (port `http`, one
    /// EndpointSlice `NAME-1`) and routed by an Ingress of our class, `NAME` for host
    /// `NAME.example`.
    pub async fn start(names: &[&str]) -> Cluster {
        let api = ApiServer::start();
        let mut backends = Vec::new();
        for name in names {
            let backend = Backend::start(name).await;
            api.apply(mk_service("shop", name));
            api.apply(mk_slice("shop", &format!("{name}-1"), name, backend.port()));
            api.apply(mk_ingress("shop", name, OURS, &host(name), name));
            backends.push(backend);
        }
        let dir = tempfile::tempdir().expect("a scratch directory");
        Cluster { api, dir, backends }
    }

    /// `shunt run` as `identity`, once it serves its first table.
    pub async fn shunt(&self, identity: &str, args: &[&str]) -> Shunt {
        Shunt::start(&self.api, self.dir.path(), identity, args).await
    }

    pub fn backend(&self, name: &str) -> &Backend {
        self.backends
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("no backend {name}"))
    }

    /// Points Service `service`'s only EndpointSlice at `backend`.
    pub fn point(&self, service: &str, backend: &Backend) -> serde_json::Value {
        self.api
            .apply(mk_slice("shop", &format!("{service}-1"), service, backend.port()))
    }
}

/// The host an Ingress made by [`Cluster::start`] routes.
pub fn host(name: &str) -> String {
    format!("{name}.example")
}

/// Waits (bounded) until requests for `host` reach `backend`.
pub async fn until_served_by(shunt: &Shunt, host: &str, backend: &str, within: Duration) {
    let what = format!("{host} to be served by {backend}");
    eventually(&what, within, async || {
        (shunt.backend_for(host).await.as_deref() == Ok(backend)).then_some(())
    })
    .await;
}
