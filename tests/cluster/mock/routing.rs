//! `--watch-namespace` against the in-test server's request log: nothing outside the watched
//! namespace is read. Routing from live objects runs on the real API server (`real/routing.rs`).

use std::time::Duration;

use super::{Backend, Cluster, OURS, host, mk_ingress, mk_service, mk_slice, until_served_by};
use http::StatusCode;

const PER_UPDATE: Duration = Duration::from_secs(5);

#[tokio::test]
async fn only_the_watched_namespaces_are_listed_watched_and_served() {
    let cluster = Cluster::start(&["web"]).await;
    let elsewhere = Backend::pod("elsewhere").start().await;
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
        let cluster_scoped = request.path.ends_with("/ingressclasses")
            || request.path.ends_with("/gatewayclasses")
            || request.path.contains("/leases/");
        assert!(
            cluster_scoped || request.path.contains("/namespaces/shop/"),
            "read outside shop: {}",
            request.path
        );
    }
}
