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

/// TkeServiceConfig is a CRD only TKE clusters have: with a qcloud shadow class, its list answers
/// 404 here, and the first publish must not wait for it.
#[tokio::test]
async fn a_qcloud_class_is_served_where_the_tkeserviceconfig_crd_does_not_exist() {
    let cluster = Cluster::start(&["web"]).await;
    let mut service = super::mk_service("shop", "tke-web");
    service["spec"]["type"] = serde_json::json!("NodePort");
    cluster.api.apply(service);
    let port = cluster.backend("web").port();
    cluster.api.apply(super::mk_slice("shop", "tke-web-1", "tke-web", port));
    cluster
        .api
        .apply(super::mk_ingress("shop", "tke", "qcloud", &host("tke"), "tke-web"));
    let shunt = Shunt::start(
        &cluster.api,
        cluster.dir.path(),
        "shunt-0",
        &["--shadow-class", "qcloud"],
    )
    .await;
    until_served_by(&shunt, &host("tke"), "web", Duration::from_secs(5)).await;
    let requests = cluster.api.requests();
    let refused = |r: &&super::Recorded| r.is_list_of("tkeserviceconfigs") && r.status == 404;
    assert!(requests.iter().any(|r| refused(&r)), "TkeServiceConfigs were listed");
}
