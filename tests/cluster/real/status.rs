//! Ingress status on the real API server (a subresource, kept apart from `spec`): our classes
//! (by name, or by their IngressClass's controller) get the published address; foreign and
//! shadow classes are never written; an Ingress that leaves our class loses only our address.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    OURS, STATUS_ADDRESS,
    envtest::{CONTROLLER, Real},
    eventually, lb_status, mk_ingress, mk_ingress_class, mk_service, until_served_by,
};

const WITHIN: Duration = Duration::from_secs(15);
/// What a cloud load balancer wrote into the status of its own Ingresses.
const CLB: &str = "198.51.100.1";

async fn status_of(real: &Real, name: &str) -> Value {
    lb_status(&real.kube.get("Ingress", name).await.expect("stored"))
}

#[tokio::test]
async fn status_is_written_for_our_classes_only_and_cleared_when_one_leaves() {
    let Some(real) = Real::start("status").await else {
        return;
    };
    let Some(origin) = real.pod_backend("web").await else {
        return;
    };
    let ns = &real.ns;
    let edge = format!("edge-{ns}");
    real.apply(mk_ingress_class(&edge, CONTROLLER)).await;
    real.apply(mk_service(ns, "web")).await;
    real.apply(super::envtest::mk_pod_slice(ns, "web-1", "web", &origin))
        .await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    real.apply(mk_ingress(ns, "edge", &edge, "edge.example", "web")).await;
    real.apply(mk_ingress(ns, "foreign", "nginx", "foreign.example", "web"))
        .await;
    real.apply(mk_ingress(ns, "shadow", "alb", "shadow.example", "web"))
        .await;
    let clb = json!({"loadBalancer": {"ingress": [{"ip": CLB}]}});
    real.kube.patch_status("Ingress", "foreign", clb.clone()).await;
    real.kube.patch_status("Ingress", "shadow", clb).await;
    let shunt = real.shunt("shunt-0", &["--shadow-class", "alb"]).await;

    let ours = json!([{"ip": STATUS_ADDRESS}]);
    eventually("our Ingresses' status", WITHIN, async || {
        (status_of(&real, "web").await == ours && status_of(&real, "edge").await == ours).then_some(())
    })
    .await;
    // Shadow Ingresses are served all the same, and their status stays the cloud's.
    until_served_by(&shunt, "shadow.example", "web", WITHIN).await;
    assert_eq!(status_of(&real, "foreign").await, json!([{"ip": CLB}]));
    assert_eq!(status_of(&real, "shadow").await, json!([{"ip": CLB}]));

    real.apply(mk_ingress(ns, "web", "nginx", "web.example", "web")).await;
    eventually("our address to be cleared", WITHIN, async || {
        status_of(&real, "web").await.is_null().then_some(())
    })
    .await;
    assert_eq!(status_of(&real, "edge").await, ours);
    real.kube.delete("IngressClass", &edge).await;
}
