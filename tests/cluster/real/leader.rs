//! Leader election on the real API server's Lease: one replica holds it, SIGTERM releases it
//! (the server keeps the write), and the other replica takes over and writes.

use std::time::Duration;

use super::{OURS, envtest::Real, eventually, mk_ingress, mk_service};

const WITHIN: Duration = Duration::from_secs(15);
/// Lease timings short enough for a takeover within a test.
pub(super) const FAST: [&str; 6] = [
    "--lease-duration",
    "3s",
    "--renew-deadline",
    "2s",
    "--retry-period",
    "500ms",
];

async fn holder(real: &Real) -> Option<String> {
    let lease = real.kube.get("Lease", "shunt-leader").await?;
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

#[tokio::test]
async fn on_sigterm_the_leader_releases_the_lease_and_the_other_replica_takes_over() {
    let Some(real) = Real::start("leader").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_ingress(ns, "broken", OURS, "broken.example", "missing"))
        .await;
    let mut first = real.shunt("shunt-0", &FAST).await;
    eventually("shunt-0 to hold the Lease", WITHIN, async || {
        (holder(&real).await.as_deref() == Some("shunt-0")).then_some(())
    })
    .await;
    let second = real.shunt("shunt-1", &FAST).await;
    // The follower stays one while the leader renews.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(holder(&real).await.as_deref(), Some("shunt-0"));
    assert_eq!(second.metric("shunt_leader").await, Some(0.0));
    assert_eq!(first.metric("shunt_leader").await, Some(1.0));

    first.terminate();
    first.wait_exit(WITHIN).await;
    eventually("shunt-1 to hold the Lease", Duration::from_secs(5), async || {
        (holder(&real).await.as_deref() == Some("shunt-1")).then_some(())
    })
    .await;
    let lease = real.kube.get("Lease", "shunt-leader").await.expect("the Lease");
    assert!(
        lease["spec"]["leaseTransitions"].as_i64().unwrap_or(0) >= 1,
        "a transition is counted: {lease}"
    );
    eventually("shunt-1 to lead", WITHIN, async || {
        (second.metric("shunt_leader").await == Some(1.0)).then_some(())
    })
    .await;
    // shunt-1 now writes: its Event about the broken Ingress arrives.
    eventually("an Event from shunt-1", WITHIN, async || {
        let events = real.kube.list("Event", "").await;
        events.iter().any(|e| e["reportingInstance"] == "shunt-1").then_some(())
    })
    .await;
}
