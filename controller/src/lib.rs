//! shunt's control plane: cluster objects in, route tables out, and the `shunt` binary's
//! commands (`cmd/`: one file each).
//!
//! ```text
//! manifests/ (files) ─┐
//!                     ├─▶ ClusterState ─▶ compile (pure) ─▶ Compiled { table, diagnostics }
//! watch/ (API)       ─┘                                       └─▶ control.rs publish ─▶ proxy
//! ```

pub mod allocator;
pub mod cmd;
pub mod compile;
pub mod control;
pub mod dns;
pub mod events;
pub mod leader;
pub mod manifests;
pub mod metrics;
pub mod objects;
pub mod residency;
pub mod shadow;
pub mod sources;
pub mod status;
pub mod telemetry;
pub mod watch;

#[cfg(test)]
mod fixtures;
