//! `shunt run`, the real binary, against an in-test Kubernetes API server on loopback: lists and
//! watches, faults in them, Ingress status, Events and leader election between two replicas.
//!
//! ```text
//! test ─apply/delete/faults─▶ ApiServer (127.0.0.1:0) ◀─list/watch/lease/status/events─ shunt run (1 or 2)
//!  └──────────── requests (Host: NAME.example) ─────────────────────────────────────────▶ proxy ─▶ Backend(s)
//! ```
//! Each test starts its own API server and shunt processes on port 0, so tests run in parallel.

mod support;

mod client;
mod coredns;
mod events;
mod faults;
mod leader;
mod rbac;
mod routing;
mod scale;
mod shared_dns;
mod startup;
mod status;
