//! Ingress status on the real API server: the published address goes into `status` (a
//! subresource the server keeps apart from `spec`) for our class only, and goes when the
//! Ingress leaves it.

use std::time::Duration;

use serde_json::json;

use crate::support::{OURS, STATUS_ADDRESS, eventually, lb_status, mk_ingress, mk_service, real::Real};

const WITHIN: Duration = Duration::from_secs(15);

#[tokio::test]
async fn status_is_written_for_our_class_only_and_cleared_when_it_leaves() {
    let Some(real) = Real::start("status").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    real.apply(mk_ingress(ns, "foreign", "nginx", "foreign.example", "web"))
        .await;
    let _shunt = real.shunt("shunt-0", &[]).await;

    let ours = json!([{"ip": STATUS_ADDRESS}]);
    eventually("web's status", WITHIN, async || {
        (lb_status(&real.kube.get("Ingress", "web").await?) == ours).then_some(())
    })
    .await;
    let foreign = real.kube.get("Ingress", "foreign").await.expect("stored");
    assert!(lb_status(&foreign).is_null(), "{foreign}");

    let moved = mk_ingress(ns, "web", "nginx", "web.example", "web");
    real.apply(moved).await;
    eventually("our address to be cleared", WITHIN, async || {
        lb_status(&real.kube.get("Ingress", "web").await?)
            .is_null()
            .then_some(())
    })
    .await;
}
