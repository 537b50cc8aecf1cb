//! `shunt run`, the real binary, against Kubernetes API servers on loopback, in two rooms:
//! `real/` (test names `real::`) against a real kube-apiserver and etcd (`real/envtest`, and
//! docs/testing.md for how the binaries are found); `mock/` (test names `mock::`) against the
//! in-test server (`mock/apiserver`) for what a real one cannot stage on demand: black holes,
//! stalls, slow or malformed answers, forced `410 Gone`, and the exact request log. `support/`
//! holds what both share, over `tests/common` (the launcher and the fake pod).
//!
//! ```text
//! test ─apply/delete/faults─▶ ApiServer (127.0.0.1:0) ◀─list/watch/lease/status/events─ shunt run (1 or 2)
//!  └──────────── requests (Host: NAME.example) ─────────────────────────────────────────▶ proxy ─▶ Backend(s)
//! ```
//! Each in-test-server test starts its own API server; the real tier shares one control plane per
//! binary, a namespace per test. Shunt processes listen on port 0, so tests run in parallel.

mod support;

mod mock;
mod real;
