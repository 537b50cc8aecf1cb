//! shunt's data plane: serves an immutable route table, forwarding straight to pod addresses.
//!
//! ```text
//!                       RoutePublisher ──store──▶ ArcSwap<RouteTable> ◀──load── RouteReader
//!                                                        │
//! client ─▶ server (h1/h2c) ─▶ Proxy::serve ─▶ lookup(host, path) ─▶ Upstream::pick ─▶ pooled client ─▶ pod
//! ```
//! Never depends on kube: the controller turns cluster objects into a [`routes::spec::TableSpec`].

pub mod admin;
pub mod body;
pub mod dataplane;
pub mod error;
pub mod h1;
pub mod headers;
pub mod lograte;
pub mod metrics;
pub mod proxy;
pub mod publish;
pub mod redirect;
pub mod request;
pub mod routes;
pub mod server;
pub mod tls;
pub mod tunnel;
pub mod upstream;

pub use prometheus_client::registry::Registry;
