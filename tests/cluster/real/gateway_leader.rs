//! Gateway API status is written by the leader alone: two replicas serve a route while another
//! holder keeps the Lease and neither writes a status; once the Lease is free, the replica that
//! takes it writes every status and the other still writes nothing.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    envtest::{Real, mk_pod_slice},
    gateway::{WITHIN, holds, mk_class, mk_gateway, mk_route, status_when},
    leader::FAST,
    mk_service, until_served_by,
};

/// A Lease held by a replica that is not running, renewed now for an hour.
fn lease_held_elsewhere(ns: &str) -> Value {
    let now = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%S.000000Z"])
        .output()
        .expect("date");
    let now = String::from_utf8_lossy(&now.stdout).trim().to_string();
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"namespace": ns, "name": "shunt-leader"},
           "spec": {"holderIdentity": "elsewhere", "leaseDurationSeconds": 3600,
                    "acquireTime": now, "renewTime": now}})
}

/// The stored status of the namespaced objects whose status shunt would write. Not the
/// GatewayClass: it is cluster-wide, so the leaders of other tests (watching other namespaces)
/// may write it.
async fn statuses(real: &Real) -> Vec<Value> {
    let mut all = Vec::new();
    for (kind, name) in [("Gateway", "web"), ("HTTPRoute", "api")] {
        let stored = real.kube.get(kind, name).await.expect("stored");
        all.push(stored["status"].clone());
    }
    all
}

fn unwritten(status: &Value) -> bool {
    let empty = |key: &str| status[key].as_array().is_none_or(Vec::is_empty);
    empty("conditions") && empty("parents")
        || status["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().all(|c| c["reason"] == "Pending"))
}

#[tokio::test]
async fn only_the_replica_holding_the_lease_writes_gateway_status() {
    let Some(real) = Real::start_with_gateway_api("gateway-leader").await else {
        return;
    };
    let Some(blue) = real.pod_backend("blue").await else {
        return;
    };
    let ns = &real.ns;
    let class = format!("shunt-{ns}");
    real.apply(lease_held_elsewhere(ns)).await;
    real.apply(mk_class(&class)).await;
    real.apply(mk_gateway(ns, &class)).await;
    real.apply(mk_service(ns, "blue")).await;
    real.apply(mk_pod_slice(ns, "blue-1", "blue", &blue)).await;
    real.apply(mk_route(ns, "api", "api.example", "blue")).await;

    let replicas = [real.shunt("shunt-0", &FAST).await, real.shunt("shunt-1", &FAST).await];
    for replica in &replicas {
        until_served_by(replica, "api.example", "blue", WITHIN).await;
    }
    // Several retry periods pass with both replicas serving: neither leads, neither writes.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for replica in &replicas {
        assert_eq!(replica.metric("shunt_leader").await, Some(0.0));
    }
    let before = statuses(&real).await;
    assert!(before.iter().all(unwritten), "a follower wrote status: {before:?}");

    real.kube.delete("Lease", "shunt-leader").await;
    let accepted = |s: &Value| holds(&s["conditions"], "Accepted", "Accepted");
    status_when(&real, "GatewayClass", &class, accepted).await;
    status_when(&real, "Gateway", "web", |s| {
        holds(&s["conditions"], "Programmed", "Programmed") && s["listeners"][0]["attachedRoutes"] == 1
    })
    .await;
    let route = status_when(&real, "HTTPRoute", "api", |s| !s["parents"].is_null()).await;
    assert!(holds(&route["parents"][0]["conditions"], "Accepted", "Accepted"));

    let lease = real.kube.get("Lease", "shunt-leader").await.expect("a new Lease");
    let leader = lease["spec"]["holderIdentity"].as_str().unwrap_or_default().to_string();
    let [first, second] = replicas;
    let (mut leaving, staying) = match leader.as_str() {
        "shunt-0" => (first, second),
        "shunt-1" => (second, first),
        other => panic!("the Lease went to {other:?}, not a replica"),
    };
    assert_eq!(leaving.metric("shunt_leader").await, Some(1.0));
    assert_eq!(staying.metric("shunt_leader").await, Some(0.0));

    // The leader leaves; the other replica takes the Lease and writes the next status change.
    leaving.terminate();
    leaving.wait_exit(WITHIN).await;
    real.apply(mk_route(ns, "api", "api.other", "blue")).await;
    status_when(&real, "HTTPRoute", "api", |s| {
        s["parents"][0]["conditions"][0]["observedGeneration"] == 2
    })
    .await;
    assert_eq!(staying.metric("shunt_leader").await, Some(1.0));
}
