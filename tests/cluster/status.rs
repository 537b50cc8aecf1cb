//! Ingress status: our class gets the published address; foreign and shadow classes are never
//! written; an Ingress that leaves our class loses only our address.

use std::time::Duration;

use serde_json::json;

use crate::support::{
    Cluster, OURS, STATUS_ADDRESS, eventually, host, lb_status, mk_ingress, mk_ingress_class, poll_until,
    until_served_by,
};

const WITHIN: Duration = Duration::from_secs(5);
/// What a cloud load balancer wrote into the status of its own Ingresses.
const CLB: &str = "198.51.100.1";

#[tokio::test]
async fn status_is_written_for_our_class_only() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let mut foreign = mk_ingress("shop", "foreign", "nginx", "foreign.example", "web");
    foreign["status"] = json!({"loadBalancer": {"ingress": [{"ip": CLB}]}});
    api.apply(foreign);
    let mut shadow = mk_ingress("shop", "shadow", "alb", &host("shadow"), "web");
    shadow["status"] = json!({"loadBalancer": {"ingress": [{"ip": CLB}]}});
    api.apply(shadow);
    api.apply(mk_ingress("shop", "shadow-new", "alb", &host("shadow-new"), "web"));
    // A class of ours by its IngressClass's controller, not by name.
    api.apply(mk_ingress_class("edge", "shunt.dev/ingress-controller"));
    api.apply(mk_ingress("shop", "edge", "edge", &host("edge"), "web"));
    let shunt = cluster.shunt("shunt-0", &["--shadow-class", "alb"]).await;

    let ours = json!([{"ip": STATUS_ADDRESS}]);
    eventually("our Ingresses' status", WITHIN, async || {
        let written = |name: &str| {
            api.get("Ingress", "shop", name)
                .is_some_and(|ingress| lb_status(&ingress) == ours)
        };
        (written("web") && written("edge")).then_some(())
    })
    .await;
    // Shadow Ingresses are served all the same.
    until_served_by(&shunt, &host("shadow"), "web", WITHIN).await;
    until_served_by(&shunt, &host("shadow-new"), "web", WITHIN).await;

    // Our Ingress moves to another class: the address we wrote goes, and so does the route.
    let mut moved = api.get("Ingress", "shop", "web").expect("stored");
    moved["spec"]["ingressClassName"] = json!("nginx");
    api.apply(moved);
    eventually("our address to be cleared", WITHIN, async || {
        lb_status(&api.get("Ingress", "shop", "web")?).is_null().then_some(())
    })
    .await;

    let mut writes: Vec<String> = api
        .requests()
        .iter()
        .filter(|r| r.ok())
        .filter_map(|r| r.ingress_status_write())
        .collect();
    writes.sort();
    assert_eq!(
        writes,
        ["shop/edge", "shop/web", "shop/web"],
        "one write each, one clear, nothing for the other classes"
    );
    assert_eq!(
        lb_status(&api.get("Ingress", "shop", "foreign").expect("stored")),
        json!([{"ip": CLB}])
    );
    assert_eq!(
        lb_status(&api.get("Ingress", "shop", "shadow").expect("stored")),
        json!([{"ip": CLB}])
    );
    assert!(lb_status(&api.get("Ingress", "shop", "shadow-new").expect("stored")).is_null());
}

#[tokio::test]
async fn status_follows_the_publish_service_cluster_ip() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let mut service = crate::support::mk_service("shunt-system", "shunt");
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
    let other = crate::support::Backend::start("web-2").await;
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
