//! The kube clients' timeouts: requests get a 10 s read timeout, watches none, so a watch that
//! stays silent longer than that is still the one that delivers the next change.

use std::time::Duration;

use super::{Cluster, OURS, host, mk_ingress, until_served_by};

/// Longer than the API client's read timeout (10 s, `cluster::API_READ_TIMEOUT`).
const SILENCE: Duration = Duration::from_secs(12);

#[tokio::test]
async fn a_watch_silent_for_longer_than_the_read_timeout_keeps_delivering() {
    let cluster = Cluster::start(&["web"]).await;
    let shunt = cluster.shunt("shunt-0", &[]).await;
    let ingress_requests = || {
        let requests = cluster.api.requests();
        let lists = requests.iter().filter(|r| r.is_list_of("ingresses")).count();
        let watches = requests.iter().filter(|r| r.is_watch_of("ingresses")).count();
        (lists, watches)
    };
    let before = ingress_requests();
    assert_eq!(before.1, 1, "one Ingress watch open");

    tokio::time::sleep(SILENCE).await;
    cluster
        .api
        .apply(mk_ingress("shop", "late", OURS, &host("late"), "web"));
    until_served_by(&shunt, &host("late"), "web", Duration::from_secs(5)).await;
    assert_eq!(
        ingress_requests(),
        before,
        "the change came by the first watch, without a new list or watch"
    );
}
