//! Ingress status writes against the in-test server's request log: exactly which writes are
//! made, and none repeated. What the status ends up as, by class, is tested on the real API
//! server (`real/status.rs`).

use std::time::Duration;

use serde_json::json;

use super::{Cluster, OURS, STATUS_ADDRESS, eventually, host, lb_status, mk_ingress, poll_until, until_served_by};

const WITHIN: Duration = Duration::from_secs(5);

#[tokio::test]
async fn status_follows_the_publish_service_cluster_ip() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let mut service = super::mk_service("shunt-system", "shunt");
    service["spec"]["clusterIP"] = json!("10.96.0.10");
    service["spec"]["clusterIPs"] = json!(["10.96.0.10"]);
    api.apply(service.clone());
    let _shunt = cluster
        .shunt("shunt-0", &["--publish-service", "shunt-system/shunt"])
        .await;
    eventually("the Service's ClusterIP in status", WITHIN, async || {
        (lb_status(&api.get("Ingress", "shop", "web")?) == json!([{"ip": "10.96.0.10"}])).then_some(())
    })
    .await;
}

/// A status write's own MODIFIED event can lag behind (a loaded API server); a compile in the
/// meantime must not write the same status again from the stale copy (which the API refuses
/// with 409, logged as a failed write).
#[tokio::test]
async fn our_own_status_write_is_not_repeated_before_its_watch_event_arrives() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let shunt = cluster.shunt("shunt-0", &[]).await;
    let ours = json!([{"ip": STATUS_ADDRESS}]);
    eventually("our Ingress's status", WITHIN, async || {
        (lb_status(&api.get("Ingress", "shop", "web")?) == ours).then_some(())
    })
    .await;

    let since = tokio::time::Instant::now();
    api.lag_watches("ingresses", Duration::from_millis(500));
    api.apply(mk_ingress("shop", "second", OURS, &host("second"), "web"));
    eventually("the new Ingress's status", WITHIN, async || {
        (lb_status(&api.get("Ingress", "shop", "second")?) == ours).then_some(())
    })
    .await;
    // Within the lag: an unrelated change makes shunt compile and sync again.
    let other = super::Backend::pod("web-2").start().await;
    cluster.point("web", &other);
    until_served_by(&shunt, &host("web"), "web-2", WITHIN).await;

    let refused = poll_until(Duration::from_secs(1), async || {
        let requests = api.requests();
        let refused = requests
            .iter()
            .filter(|r| r.at >= since && r.status == 409 && r.ingress_status_write().is_some());
        let refused = refused.map(|r| r.path.clone());
        Some(refused.collect::<Vec<_>>()).filter(|refused| !refused.is_empty())
    })
    .await;
    assert_eq!(refused, None, "status written again from a stale copy");
}
