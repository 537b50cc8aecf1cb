//! `--manage-coredns` and `shunt dns --kubeconfig` against the fake API server: the rules
//! follow the served hosts, only the marker block (or our own key) changes, and only the one
//! ConfigMap is read and updated.

use std::{process::Stdio, time::Duration};

use serde_json::{Value, json};

use super::{Cluster, OURS, eventually, host, mk_ingress};

const TKE_COREFILE: &str = include_str!("../../../controller/src/dns/testdata/tke.Corefile");
const TARGET: &str = "shunt.shunt-system.svc.cluster.local";
/// The markers of the release `--publish-service shunt-system/shunt` names.
const BEGIN: &str = "# BEGIN shunt shunt-system/shunt";
const END: &str = "# END shunt shunt-system/shunt";
/// A compile after an Ingress change, then the leader's write.
const WITHIN: Duration = Duration::from_secs(5);

fn mk_config_map(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "kube-system", "name": name}, "data": data})
}

fn rule(name: &str) -> String {
    format!("rewrite name exact {} {TARGET}", host(name))
}

/// The value of `key` in ConfigMap `kube-system/name`.
fn config_map_key(cluster: &Cluster, name: &str, key: &str) -> Option<String> {
    cluster.api.get("ConfigMap", "kube-system", name)?["data"][key]
        .as_str()
        .map(str::to_string)
}

/// The Corefile without the shunt block.
fn outside_block(corefile: &str) -> String {
    let begin = corefile.find(&format!("    {BEGIN}\n")).expect("the block");
    let end = corefile.find(&format!("    {END}\n")).expect("the block's end") + format!("    {END}\n").len();
    format!("{}{}", &corefile[..begin], &corefile[end..])
}

const MANAGED: [&str; 3] = ["--publish-service", "shunt-system/shunt", "--manage-coredns"];

#[tokio::test]
async fn the_corefile_block_follows_the_served_hosts_and_nothing_else_changes() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    api.apply(mk_config_map("coredns", json!({"Corefile": TKE_COREFILE})));
    // Without the prune delay: removing every host empties the block at once (dns_guards.rs
    // tests the delay).
    let args = [&MANAGED[..], &["--dns-prune-delay", "0s"]].concat();
    let _shunt = cluster.shunt("shunt-0", &args).await;

    let corefile = eventually("the web rule in the Corefile", WITHIN, async || {
        config_map_key(&cluster, "coredns", "Corefile").filter(|c| c.contains(&rule("web")))
    })
    .await;
    assert!(
        corefile.starts_with(&format!(".:53 {{\n    {BEGIN}\n    {}\n    {END}\n", rule("web"))),
        "{corefile}"
    );
    assert_eq!(outside_block(&corefile), TKE_COREFILE);

    api.apply(mk_ingress("shop", "api", OURS, &host("api"), "web"));
    eventually("the api rule added", WITHIN, async || {
        config_map_key(&cluster, "coredns", "Corefile").filter(|c| c.contains(&rule("api")) && c.contains(&rule("web")))
    })
    .await;

    api.delete("Ingress", "shop", "api");
    api.delete("Ingress", "shop", "web");
    let emptied = eventually("an empty block", WITHIN, async || {
        config_map_key(&cluster, "coredns", "Corefile").filter(|c| c.contains(&format!("    {BEGIN}\n    {END}\n")))
    })
    .await;
    assert_eq!(outside_block(&emptied), TKE_COREFILE);

    let touched: Vec<String> = api
        .requests()
        .iter()
        .filter(|r| r.path.contains("/configmaps"))
        .map(|r| format!("{} {}", r.method, r.path))
        .filter(|r| {
            !matches!(
                r.as_str(),
                "GET /api/v1/namespaces/kube-system/configmaps/coredns"
                    | "PUT /api/v1/namespaces/kube-system/configmaps/coredns"
                    // Whether node-local-dns runs (it does not here: nothing written).
                    | "GET /api/v1/namespaces/kube-system/configmaps/node-local-dns"
            )
        })
        .collect();
    assert_eq!(
        touched,
        Vec::<String>::new(),
        "only get and update of kube-system/coredns"
    );
}

#[tokio::test]
async fn the_custom_target_writes_its_own_key_of_coredns_custom() {
    let cluster = Cluster::start(&["web"]).await;
    cluster
        .api
        .apply(mk_config_map("coredns-custom", json!({"team.override": "log\n"})));
    let mut args = MANAGED.to_vec();
    args.extend(["--coredns-target", "custom", "--dns-exclude", "legacy.example"]);
    let _shunt = cluster.shunt("shunt-0", &args).await;
    let ours = eventually("our key", WITHIN, async || {
        config_map_key(&cluster, "coredns-custom", "shunt-system.shunt.override")
    })
    .await;
    assert!(ours.contains(&format!("\n{}\n", rule("web"))), "{ours}");
    assert_eq!(
        config_map_key(&cluster, "coredns-custom", "team.override").as_deref(),
        Some("log\n")
    );
}

#[tokio::test]
async fn without_the_flag_coredns_is_never_touched() {
    let cluster = Cluster::start(&["web"]).await;
    cluster
        .api
        .apply(mk_config_map("coredns", json!({"Corefile": TKE_COREFILE})));
    cluster.api.apply(super::mk_service("shunt-system", "shunt"));
    let shunt = cluster
        .shunt("shunt-0", &["--publish-service", "shunt-system/shunt"])
        .await;
    // The leader has written status by the time the Ingress shows our address.
    eventually("status written", WITHIN, async || {
        (super::lb_status(&cluster.api.get("Ingress", "shop", "web")?) != json!(null)).then_some(())
    })
    .await;
    drop(shunt);
    assert!(cluster.api.requests().iter().all(|r| !r.path.contains("/configmaps")));
}

#[tokio::test]
async fn shunt_dns_prints_the_rules_for_what_the_api_serves() {
    let cluster = Cluster::start(&["web", "api"]).await;
    let kubeconfig = cluster.api.kubeconfig(cluster.dir.path(), "shunt-dns");
    let output = tokio::process::Command::from(super::launch::shunt())
        .arg("dns")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--publish-service", "shunt-system/shunt", "--dns-exclude", &host("api")])
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(WITHIN, output)
        .await
        .expect("shunt dns finishes")
        .expect("shunt dns runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    // The rules; the view block printed after them is checked in tests/e2e/dns.rs.
    let rules = printed.split("# Address records only").next().unwrap_or_default();
    assert_eq!(
        rules,
        format!(
            "{BEGIN}\n# refused {}: excluded by --dns-exclude {}\n{}\n{END}\n",
            host("api"),
            host("api"),
            rule("web")
        )
    );
}
