//! `shunt run`, the real binary, against Kubernetes API servers on loopback. `real::` tests use a
//! real kube-apiserver and etcd (see `support/real`, and docs/testing.md for how the binaries are
//! found); the other modules use the in-test server (`support/apiserver.rs`) for what a real one
//! cannot stage on demand: black holes, stalls, slow or malformed answers, forced `410 Gone`,
//! and the exact request log.
//!
//! ```text
//! test ─apply/delete/faults─▶ ApiServer (127.0.0.1:0) ◀─list/watch/lease/status/events─ shunt run (1 or 2)
//!  └──────────── requests (Host: NAME.example) ─────────────────────────────────────────▶ proxy ─▶ Backend(s)
//! ```
//! Each in-test-server test starts its own API server; the real tier shares one control plane per
//! binary, a namespace per test. Shunt processes listen on port 0, so tests run in parallel.

mod support;

mod client;
mod coredns;
mod dns_guards;
mod faults;
mod leader;
mod rbac;
mod real;
mod routing;
mod scale;
mod shared_dns;
mod startup;
mod status;
