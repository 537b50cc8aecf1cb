//! The in-test API server's tier (`apiserver/`): for what a real server cannot stage on demand,
//! black holes, stalls, slow or malformed answers, forced `410 Gone`, lists held back, and the
//! exact log of requests shunt made. Each test starts its own server.

mod apiserver;

mod client;
mod coredns;
mod dns_guards;
mod faults;
mod leader;
mod rbac;
mod routing;
mod scale;
mod shared_dns;
mod startup;
mod status;

use std::path::Path;

pub use self::apiserver::{ApiServer, Gone, Recorded, Stall};
pub use crate::support::*;

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
            let backend = Backend::pod(name).start().await;
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

// === impl Shunt ===

impl Shunt {
    /// `shunt run` as replica `identity` (its Lease identity and its API token) against `api`,
    /// returning once both listeners are up: routes may not be published yet.
    pub async fn spawn(api: &ApiServer, dir: &Path, identity: &str, args: &[&str]) -> Shunt {
        let kubeconfig = api.kubeconfig(dir, identity);
        Shunt::spawn_with(kubeconfig, "shunt-system", identity, args, Some(STATUS_ADDRESS)).await
    }

    /// [`Shunt::spawn`], then waits for the first route table.
    pub async fn start(api: &ApiServer, dir: &Path, identity: &str, args: &[&str]) -> Shunt {
        let shunt = Shunt::spawn(api, dir, identity, args).await;
        shunt.wait_ready().await;
        shunt
    }
}
