//! How every test starts the `shunt` binary: which build, and an environment that cannot change
//! the flags the test passes. Shared by the `e2e` and `cluster` test binaries (`#[path]`).

use std::{ffi::OsString, process::Command};

/// Variables `shunt` reads as flag values (clap `env`) or to find an API server: a developer's
/// shell must not change what a test runs.
const FLAG_ENV: [&str; 9] = [
    "SHUNT_HTTP_ADDR",
    "SHUNT_HTTPS_ADDR",
    "SHUNT_ADMIN_ADDR",
    "SHUNT_LOG_FORMAT",
    "SHUNT_NODE_NAME",
    "SHUNT_ZONE",
    "POD_NAME",
    "POD_NAMESPACE",
    "KUBECONFIG",
];

/// The binary under test: `SHUNT_BIN` (another build, such as the release build a scale run
/// measures) or the one cargo built for this test.
pub fn binary() -> OsString {
    std::env::var_os("SHUNT_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_shunt").into())
}

/// `shunt` with the flag environment cleared; async callers wrap it in
/// `tokio::process::Command::from`.
pub fn shunt() -> Command {
    let mut command = Command::new(binary());
    for name in FLAG_ENV {
        command.env_remove(name);
    }
    command
}
