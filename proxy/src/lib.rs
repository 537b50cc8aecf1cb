//! shunt's data plane: serves an immutable route table, forwarding straight to pod addresses.
//!
//! ```text
//!                       RoutePublisher ──store──▶ ArcSwap<RouteTable> ◀──load── RouteReader
//!                                                        │
//! client ─▶ server (h1/h2c, TLS) ─▶ proxy: admit ─▶ route ─▶ answer ─▶ prepare ─▶ attempt ─▶ respond ─▶ answer::finish ─▶ client
//!                                                    │ lookup(host, path)             │ Upstream::pick, pooled client
//!                                                    ▼                                ▼
//!                                                 routes/                         upstream/ ─▶ endpoint (a pod)
//! ```
//! Modules import downward: `server` → `proxy` → `routes` / `upstream`, with `h1` (the HTTP/1.1
//! codec both sides share) beneath both, and the contract ([`spec`], the `shunt-spec` crate)
//! beneath everything; `dataplane` assembles the workers. Never depends on kube: the controller
//! turns cluster objects into a [`spec::TableSpec`].
//!
//! Public: [`dataplane`] (the entry point and its options), [`publish`] (the table's writer and
//! reader) and [`spec`]; every other module is private to the crate.
//!
//! # Vocabulary
//! - **route**: what a host and path lead to ([`routes::Route`]): an upstream, or a redirect.
//! - **upstream**: where a route forwards, one Service port (`namespace/service:port`), with the
//!   endpoints it currently has ([`upstream::Upstream`]).
//! - **endpoint**: one address of an upstream, a pod's `ip:port` ([`upstream::Endpoint`]).
//!
//! The code says upstream and endpoint. "Backend" stays only where others read it: the table
//! spec's `BackendSpec`/`BackendId` (as Ingress names it), metric names and labels
//! (`shunt_backend_*`, `backend="..."`) and error messages, which operators rely on; "pod" only
//! in prose, for what an endpoint is.

pub mod dataplane;
pub mod publish;
pub use shunt_spec as spec;

mod admin;
mod auth;
mod body;
mod cors;
mod error;
mod h1;
mod headers;
mod limits;
mod lograte;
mod metrics;
mod mirror;
mod pace;
mod proxy;
mod redirect;
mod request;
mod response_body;
mod routes;
mod server;
mod tls;
mod upstream;
