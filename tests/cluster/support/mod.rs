//! What both API server tiers share: `shunt run` processes and the load through them (`shunt.rs`),
//! the objects tests apply (`objects.rs`), and `tests/common` (the launcher, the fake pod,
//! waiting). Each tier's own server lives in its folder: `mock/apiserver`, `real/envtest`.

#[path = "../../common/mod.rs"]
mod common;
mod objects;
mod shunt;

use std::time::Duration;

pub use self::{
    common::{
        backend::Backend,
        launch,
        wait::{eventually, poll_until},
    },
    objects::{OURS, lb_status, mk_ingress, mk_ingress_class, mk_service, mk_slice},
    shunt::{Load, LoadReport, STATUS_ADDRESS, Shunt},
};

/// Waits (bounded) until requests for `host` reach `backend`.
pub async fn until_served_by(shunt: &Shunt, host: &str, backend: &str, within: Duration) {
    let what = format!("{host} to be served by {backend}");
    eventually(&what, within, async || {
        (shunt.backend_for(host).await.as_deref() == Ok(backend)).then_some(())
    })
    .await;
}

/// VmRSS and VmHWM of the process, and VmRSS split into heap and stacks (RssAnon) and the
/// binary's mapped pages (RssFile), in MiB.
pub fn memory(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("reading /proc/PID/status");
    status
        .lines()
        .filter(|line| {
            ["VmRSS", "VmHWM", "RssAnon", "RssFile"]
                .iter()
                .any(|name| line.starts_with(name))
        })
        .map(|line| {
            let kib: f64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            let name = line.split(':').next().unwrap_or_default();
            format!("{name} {:.0} MiB", kib / 1024.0)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many route tables `shunt` has published so far.
pub fn publishes(shunt: &Shunt) -> usize {
    shunt
        .logs()
        .iter()
        .filter(|line| line.contains("Published route table"))
        .count()
}
