//! `shunt run` against a real kube-apiserver and etcd (`envtest/`): what the API server
//! validates, authorizes and races, it does here as in a cluster. Every test name starts with
//! `real::`, which `tests/run.sh` selects (in a network namespace) and counts.

mod envtest;

mod admission;
mod conflicts;
mod coredns;
mod events;
mod gateway;
mod gateway_grpc;
mod gateway_leader;
mod gateway_selector;
mod gateway_shadow;
mod leader;
mod nginx_auth;
mod nginx_proxy_ssl;
mod node_local_dns;
mod rbac;
mod restart;
mod routing;
mod scale;
mod status;
mod tke;

pub use crate::support::*;
