//! Nothing is published before every watched kind has been listed once.

use std::time::Duration;

use http::StatusCode;

use super::{Cluster, Shunt, eventually, host, until_served_by};

#[tokio::test]
async fn routes_are_published_only_after_every_first_list() {
    let cluster = Cluster::start(&["web"]).await;
    cluster.api.hold_lists("endpointslices");
    let shunt = Shunt::spawn(&cluster.api, cluster.dir.path(), "shunt-0", &[]).await;

    // Every other kind answers its list; EndpointSlices are still being listed.
    eventually("every kind's first LIST", Duration::from_secs(5), async || {
        let requests = cluster.api.requests();
        let listed = |plural: &str| requests.iter().any(|r| r.is_list_of(plural) && r.ok());
        let waiting = requests.iter().any(|r| r.is_list_of("endpointslices") && r.status == 0);
        (waiting
            && ["ingresses", "ingressclasses", "services", "secrets"]
                .iter()
                .all(|p| listed(p)))
        .then_some(())
    })
    .await;
    assert_eq!(
        shunt.readyz().await,
        Some(StatusCode::SERVICE_UNAVAILABLE),
        "not ready before the last first list"
    );
    let reply = shunt.get(&host("web"), "/").await.expect("the proxy answers");
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "no route yet: {}", reply.body);
    assert_eq!(cluster.backend("web").hits(), 0);

    cluster.api.release_lists();
    shunt.wait_ready().await;
    until_served_by(&shunt, &host("web"), "web", Duration::from_secs(5)).await;
}
