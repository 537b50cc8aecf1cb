//! The prune guard on managed CoreDNS, against the in-test API server: when every served host
//! disappears at once, the rules stay in place (with a log line) until `--dns-prune-delay` has
//! passed, while a partial removal applies at once.

use std::time::Duration;

use serde_json::json;

use super::{Cluster, OURS, eventually, host, mk_ingress};

const TKE_COREFILE: &str = include_str!("../../../controller/src/dns/testdata/tke.Corefile");
const TARGET: &str = "shunt.shunt-system.svc.cluster.local";
const WITHIN: Duration = Duration::from_secs(5);

fn rule(name: &str) -> String {
    format!("rewrite name exact {} {TARGET}", host(name))
}

fn corefile(cluster: &Cluster) -> Option<String> {
    cluster.api.get("ConfigMap", "kube-system", "coredns")?["data"]["Corefile"]
        .as_str()
        .map(str::to_string)
}

#[tokio::test]
async fn removing_every_host_at_once_keeps_the_rules_until_the_prune_delay() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    api.apply(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "kube-system", "name": "coredns"},
                     "data": {"Corefile": TKE_COREFILE}}),
    );
    api.apply(mk_ingress("shop", "api", OURS, &host("api"), "web"));
    let args = [
        "--publish-service",
        "shunt-system/shunt",
        "--manage-coredns",
        "--dns-prune-delay",
        "5m",
    ];
    let shunt = cluster.shunt("shunt-0", &args).await;
    eventually("both rules", WITHIN, async || {
        corefile(&cluster).filter(|c| c.contains(&rule("web")) && c.contains(&rule("api")))
    })
    .await;

    // One of two removed: not more than half, written at once.
    api.delete("Ingress", "shop", "api");
    eventually("the api rule removed", WITHIN, async || {
        corefile(&cluster).filter(|c| !c.contains(&rule("api")))
    })
    .await;

    // The last one removed: all of them, so the rule stays while the delay runs.
    api.delete("Ingress", "shop", "web");
    eventually("the hold logged", WITHIN, async || {
        shunt
            .logs()
            .into_iter()
            .find(|line| line.contains("keeping them until the hosts stay absent"))
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let held = corefile(&cluster).expect("the Corefile");
    assert!(held.contains(&rule("web")), "{held}");
}
