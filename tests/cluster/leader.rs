//! Two replicas share one Lease: both serve traffic, only the leader writes status, and when the
//! leader dies the other takes over once the Lease expires.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use crate::support::{Cluster, OURS, STATUS_ADDRESS, eventually, host, lb_status, mk_ingress, until_served_by};

const WITHIN: Duration = Duration::from_secs(5);
/// The Lease lasts 15 s and followers look every 5 s; allow some scheduling slack on top.
const TAKEOVER: Duration = Duration::from_secs(25);

#[tokio::test]
async fn only_the_leader_writes_status_and_the_other_replica_takes_over_when_it_dies() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let holder = || {
        api.get("Lease", "shunt-system", "shunt-leader")
            .map(|lease| lease["spec"]["holderIdentity"].clone())
    };
    let ours = json!([{"ip": STATUS_ADDRESS}]);
    let status_of = |name: &str| api.get("Ingress", "shop", name).map(|ingress| lb_status(&ingress));

    let mut a = cluster.shunt("shunt-a", &[]).await;
    eventually("shunt-a to hold the Lease", WITHIN, async || {
        (holder()? == "shunt-a").then_some(())
    })
    .await;
    let b = cluster.shunt("shunt-b", &[]).await;
    eventually("shunt-b to look at the Lease", WITHIN, async || {
        api.requests()
            .iter()
            .any(|r| r.who == "shunt-b" && r.path.contains("/leases/"))
            .then_some(())
    })
    .await;

    api.apply(mk_ingress("shop", "second", OURS, &host("second"), "web"));
    for shunt in [&a, &b] {
        until_served_by(shunt, &host("web"), "web", WITHIN).await;
        until_served_by(shunt, &host("second"), "web", WITHIN).await;
    }
    eventually("status of both Ingresses", WITHIN, async || {
        (status_of("web")? == ours && status_of("second")? == ours).then_some(())
    })
    .await;

    a.kill().await;
    let killed = Instant::now();
    eventually("shunt-b to take the Lease over", TAKEOVER, async || {
        (holder()? == "shunt-b").then_some(())
    })
    .await;
    eprintln!(
        "shunt-b took the Lease over {:.1} s after shunt-a was killed",
        killed.elapsed().as_secs_f64()
    );
    until_served_by(&b, &host("second"), "web", WITHIN).await;

    api.apply(mk_ingress("shop", "third", OURS, &host("third"), "web"));
    eventually("status of the Ingress made after the takeover", WITHIN, async || {
        (status_of("third")? == ours).then_some(())
    })
    .await;

    let requests = api.requests();
    let writers = |who: &str| {
        requests
            .iter()
            .filter(|r| r.who == who && r.ok())
            .filter_map(|r| r.ingress_status_write())
            .collect::<Vec<_>>()
    };
    let by_a = writers("shunt-a");
    let by_b = writers("shunt-b");
    assert!(
        by_a.iter().all(|r| r.as_str() != "shop/third"),
        "shunt-a is dead: {by_a:?}"
    );
    assert!(
        by_a.contains(&"shop/web".to_string()) && by_a.contains(&"shop/second".to_string()),
        "the leader wrote: {by_a:?}"
    );
    assert_eq!(by_b, ["shop/third"], "the follower wrote nothing before it led");
    let taken_by_b = requests
        .iter()
        .filter(|r| r.who == "shunt-b" && r.ok() && r.path.contains("/leases") && r.method != http::Method::GET);
    assert!(
        taken_by_b.clone().all(|r| r.at >= killed),
        "shunt-b wrote the Lease while shunt-a held it"
    );
    assert!(taken_by_b.count() >= 1);
}
