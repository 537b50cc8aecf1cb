//! Support shared by the `e2e` and `cluster` test binaries, each of which includes this directory
//! as its `common` module (`#[path]`): one launcher of the `shunt` binary, one fake pod, waiting.

// Each binary uses part of it: the e2e tests no pod addresses, the cluster tests no h2c origins.
#![allow(dead_code)]

pub mod backend;
pub mod launch;
pub mod wait;
