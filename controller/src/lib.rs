//! shunt's control plane: cluster objects in, route tables out, and the `shunt` binary's commands.
//!
//! ```text
//! manifests.rs (files) ─┐
//!                       ├─▶ ClusterState ─▶ compile (pure) ─▶ Compiled { table, diagnostics }
//! (API watchers, later) ┘                                         └─▶ standalone::publish ─▶ proxy
//! ```

pub mod cli;
pub mod compile;
pub mod dataplane;
pub mod demo;
pub mod manifests;
pub mod metrics;
pub mod standalone;
pub mod telemetry;

#[cfg(test)]
mod fixtures;
