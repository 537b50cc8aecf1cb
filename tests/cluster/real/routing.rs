//! Routes from live objects on the real API server, to origins on pod addresses: EndpointSlice
//! churn moves traffic, a deleted Ingress stops routing.

use std::time::Duration;

use http::StatusCode;

use crate::support::{
    OURS, eventually, mk_ingress, mk_service,
    real::{Real, mk_pod_slice},
    until_served_by,
};

const WITHIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn endpointslice_churn_moves_traffic_and_a_deleted_ingress_stops_routing() {
    let Some(real) = Real::start("routing").await else {
        return;
    };
    let (Some(blue), Some(green)) = (real.pod_backend("blue").await, real.pod_backend("green").await) else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_pod_slice(ns, "web-1", "web", &blue)).await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    real.apply(mk_ingress(ns, "api", OURS, "api.example", "web")).await;
    let shunt = real.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, "web.example", "blue", WITHIN).await;

    for round in 0..10 {
        let target = if round % 2 == 0 { &green } else { &blue };
        real.apply(mk_pod_slice(ns, "web-1", "web", target)).await;
        until_served_by(&shunt, "web.example", &target.name, WITHIN).await;
    }

    // A second slice of the same Service: both endpoints serve.
    real.apply(mk_pod_slice(ns, "web-2", "web", &green)).await;
    real.apply(mk_pod_slice(ns, "web-1", "web", &blue)).await;
    eventually("both endpoints to serve", WITHIN, async || {
        let (b, g) = (blue.hits(), green.hits());
        for _ in 0..20 {
            let _ = shunt.get("web.example", "/").await;
        }
        (blue.hits() > b && green.hits() > g).then_some(())
    })
    .await;

    real.kube.delete("Ingress", "web").await;
    eventually("web.example to stop routing", WITHIN, async || {
        let reply = shunt.get("web.example", "/").await.ok()?;
        (reply.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    until_served_by(&shunt, "api.example", "blue", WITHIN).await;
}
