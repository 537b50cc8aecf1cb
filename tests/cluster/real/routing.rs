//! Routes from live objects on the real API server, to origins on pod addresses: EndpointSlice
//! updates move traffic (each one timed), a second slice adds endpoints, a deleted Ingress stops
//! routing while the others serve.

use std::time::Duration;

use http::StatusCode;
use tokio::time::Instant;

use super::{
    OURS,
    envtest::{Real, mk_pod_slice},
    eventually, mk_ingress, mk_service, until_served_by,
};

const WITHIN: Duration = Duration::from_secs(10);
/// Updates made in the test; every one is timed.
const UPDATES: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpointslice_update_moves_traffic_to_the_new_endpoint() {
    let Some(real) = Real::start("churn").await else { return };
    let (Some(blue), Some(green)) = (real.pod_backend("blue").await, real.pod_backend("green").await) else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_pod_slice(ns, "web-1", "web", &blue)).await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    let shunt = real.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, "web.example", "blue", WITHIN).await;

    let mut delays = Vec::new();
    for update in 0..UPDATES {
        let target = if update % 2 == 0 { &green } else { &blue };
        let written = Instant::now();
        real.apply(mk_pod_slice(ns, "web-1", "web", target)).await;
        // Keep asking until the new endpoint answers; it notes when the first request arrived.
        loop {
            assert!(
                written.elapsed() < WITHIN,
                "update {update}: {} still not served after {WITHIN:?}",
                target.name
            );
            if shunt.backend_for("web.example").await.as_deref() == Ok(target.name.as_str()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let reached = target
            .first_hit_since(written)
            .expect("the backend saw the request it answered");
        delays.push(reached - written);
    }
    delays.sort();
    let millis = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "EndpointSlice write (real API server) -> first request at the new endpoint, {UPDATES} updates: median {:.1} ms, max {:.1} ms",
        millis(delays[delays.len() / 2]),
        millis(delays[delays.len() - 1]),
    );
}

#[tokio::test]
async fn a_second_slice_adds_endpoints_and_a_deleted_ingress_stops_routing() {
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

    real.apply(mk_pod_slice(ns, "web-2", "web", &green)).await;
    eventually("both endpoints to serve", WITHIN, async || {
        let (b, g) = (blue.hits(), green.hits());
        for _ in 0..20 {
            let _ = shunt.get("web.example", "/").await;
        }
        (blue.hits() > b && green.hits() > g).then_some(())
    })
    .await;

    real.kube.delete("Ingress", "web").await;
    eventually("web.example to answer 404", WITHIN, async || {
        let reply = shunt.get("web.example", "/").await.ok()?;
        (reply.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    assert!(shunt.backend_for("api.example").await.is_ok());
}
