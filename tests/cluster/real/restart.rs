//! The API server goes away and comes back on the same etcd: the last table keeps serving while
//! it is gone, and the watches resume (a change made after the restart is routed).

use std::time::Duration;

use super::{
    OURS,
    envtest::{Real, mk_pod_slice},
    mk_ingress, mk_service, until_served_by,
};

const WITHIN: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_last_table_serves_through_an_api_server_restart_and_watches_resume() {
    let Some(real) = Real::start_private("restart").await else {
        return;
    };
    let (Some(blue), Some(green)) = (real.pod_backend("blue").await, real.pod_backend("green").await) else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_pod_slice(ns, "web-1", "web", &blue)).await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    let shunt = real.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, "web.example", "blue", WITHIN).await;

    let plane = real.plane.clone();
    tokio::task::spawn_blocking(move || plane.kill_apiserver())
        .await
        .expect("killing kube-apiserver");
    for _ in 0..10 {
        assert_eq!(shunt.backend_for("web.example").await.as_deref(), Ok("blue"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let plane = real.plane.clone();
    tokio::task::spawn_blocking(move || plane.start_apiserver())
        .await
        .expect("starting kube-apiserver again");
    assert_eq!(shunt.backend_for("web.example").await.as_deref(), Ok("blue"));
    real.apply(mk_pod_slice(ns, "web-1", "web", &green)).await;
    until_served_by(&shunt, "web.example", "green", WITHIN).await;
    real.apply(mk_ingress(ns, "api", OURS, "api.example", "web")).await;
    until_served_by(&shunt, "api.example", "green", WITHIN).await;
}
