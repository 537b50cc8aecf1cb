//! The end-to-end harness: origins, manifests, the shunt process and clients to it.

mod checked_pod;
mod client;
#[path = "../../common/mod.rs"]
mod common;
pub mod corpus;
mod dual_pod;
mod manifests;
mod shunt;
mod tls;

pub use self::{
    checked_pod::CheckedPod,
    client::{REQUEST_TIMEOUT, Reply, collect, curl, get, raw, send_h1, send_h1_from, send_h2},
    common::{
        backend::{Backend, Body, BoxError, echo, fnv64, full, held_stream, text},
        launch::{self, sample},
        wait::eventually,
    },
    dual_pod::DualPod,
    manifests::{
        CONTROLLER, EndpointSlice, Ingress, Manifest, Manifests, mk_backend_service, mk_default_ingress_class,
        mk_ingress, mk_ingress_class, mk_path, mk_service, mk_service_on_ports, mk_slice, to_yaml,
    },
    shunt::Shunt,
    tls::{Leaf, TestCa, TlsBackend, TlsClient, leaf_names, mk_string_secret, mk_tls_secret, with_tls},
};

/// A loopback port that refuses connections: bound but never listening, so no other test can
/// take it while this is alive.
pub struct RefusingPort(tokio::net::TcpSocket);

impl RefusingPort {
    pub fn new() -> Self {
        let socket = tokio::net::TcpSocket::new_v4().expect("creating a socket");
        socket
            .bind(([127, 0, 0, 1], 0).into())
            .expect("binding a loopback port");
        RefusingPort(socket)
    }

    pub fn port(&self) -> u16 {
        self.0.local_addr().expect("a bound socket has an address").port()
    }
}

/// A directory with `objects` in `routes.yaml`, and shunt serving it with `args`.
pub async fn serve(objects: &[&dyn Manifest], args: &[&str]) -> (Manifests, Shunt) {
    let manifests = Manifests::new();
    manifests.write("routes.yaml", objects);
    let shunt = Shunt::start(manifests.path(), args).await;
    (manifests, shunt)
}

/// Echo backends behind Services of the same names, the objects that route to them, and shunt.
pub struct Site {
    /// Kept so the origins and the manifest directory live as long as the site.
    _backends: Vec<Backend>,
    _manifests: Manifests,
    pub shunt: Shunt,
}

impl Site {
    /// Starts one echo backend per name, each behind a Service of that name (port 80, named
    /// `http`) in `namespace`, writes them with `objects` to `routes.yaml` and starts shunt
    /// with `args`.
    pub async fn start(namespace: &str, names: &[&str], objects: &[&dyn Manifest], args: &[&str]) -> Site {
        let mut backends = Vec::new();
        for name in names {
            backends.push(Backend::start(name).await);
        }
        let services: Vec<_> = backends
            .iter()
            .map(|b| mk_backend_service(namespace, &b.name, None, &[b]))
            .collect();
        let mut all = objects.to_vec();
        all.push(&services);
        let (manifests, shunt) = serve(&all, args).await;
        Site {
            _backends: backends,
            _manifests: manifests,
            shunt,
        }
    }

    /// The backend that answers `GET path` for `host`; panics unless one does.
    pub async fn backend_for(&self, host: &str, path: &str) -> String {
        self.shunt.get(host, path).await.backend()
    }
}

/// `host` (`Prefix /`) routed to Service `web/<service>` port 80, with one endpoint
/// `127.0.0.1:<port>` per port; shunt serving it with `args`.
pub async fn serve_host(
    host: &str,
    service: &str,
    app_protocol: Option<&str>,
    ports: &[u16],
    args: &[&str],
) -> (Manifests, Shunt) {
    let ingress = mk_ingress("web", service).rule(host, [mk_path("/", "Prefix", service, 80)]);
    serve(
        &[&ingress, &mk_service_on_ports("web", service, app_protocol, ports)],
        args,
    )
    .await
}
