//! Watch events change where requests go: EndpointSlice updates (timed) and Ingress deletes.

use std::time::Duration;

use http::StatusCode;
use tokio::time::Instant;

use crate::support::{Backend, Cluster, OURS, eventually, host, mk_ingress, mk_service, mk_slice, until_served_by};

/// Updates made in the test; every one is timed.
const UPDATES: usize = 100;
/// Generous: the debounce is 10-100 ms, so a slow machine has plenty of room.
const PER_UPDATE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpointslice_update_moves_traffic_to_the_new_endpoint() {
    let cluster = Cluster::start(&["blue", "green"]).await;
    let shunt = cluster.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, &host("blue"), "blue", PER_UPDATE).await;

    let mut delays = Vec::new();
    for update in 0..UPDATES {
        let target = cluster.backend(if update % 2 == 0 { "green" } else { "blue" });
        let written = Instant::now();
        cluster.point("blue", target);
        // Keep asking until the answer comes from the new endpoint; the backend notes when the
        // first request reached it.
        loop {
            assert!(
                written.elapsed() < PER_UPDATE,
                "update {update}: {} still not served after {PER_UPDATE:?}",
                target.name
            );
            if shunt.backend_for(&host("blue")).await.as_deref() == Ok(target.name.as_str()) {
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
    let p99 = delays[(delays.len() * 99).div_ceil(100) - 1];
    eprintln!(
        "EndpointSlice update -> first request at the new endpoint, {UPDATES} updates: min {:.1} ms, median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        millis(delays[0]),
        millis(delays[delays.len() / 2]),
        millis(p99),
        millis(delays[delays.len() - 1]),
    );
}

#[tokio::test]
async fn a_deleted_ingress_stops_routing_while_the_others_keep_serving() {
    let cluster = Cluster::start(&["web", "api"]).await;
    let shunt = cluster.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, &host("web"), "web", PER_UPDATE).await;

    cluster.api.delete("Ingress", "shop", "web");
    eventually("web.example to answer 404", PER_UPDATE, async || {
        let reply = shunt.get(&host("web"), "/").await.ok()?;
        (reply.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    assert_eq!(shunt.backend_for(&host("api")).await.as_deref(), Ok("api"));
}

#[tokio::test]
async fn only_the_watched_namespaces_are_listed_watched_and_served() {
    let cluster = Cluster::start(&["web"]).await;
    let elsewhere = Backend::start("elsewhere").await;
    cluster.api.apply(mk_service("other", "elsewhere"));
    cluster
        .api
        .apply(mk_slice("other", "elsewhere-1", "elsewhere", elsewhere.port()));
    cluster
        .api
        .apply(mk_ingress("other", "elsewhere", OURS, &host("elsewhere"), "elsewhere"));
    let shunt = cluster.shunt("shunt-0", &["--watch-namespace", "shop"]).await;

    until_served_by(&shunt, &host("web"), "web", PER_UPDATE).await;
    let reply = shunt.get(&host("elsewhere"), "/").await.expect("the proxy answers");
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    for request in cluster.api.requests().iter().filter(|r| r.method == http::Method::GET) {
        let cluster_scoped = request.path.ends_with("/ingressclasses") || request.path.contains("/leases/");
        assert!(
            cluster_scoped || request.path.contains("/namespaces/shop/"),
            "read outside shop: {}",
            request.path
        );
    }
}
