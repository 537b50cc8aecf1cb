//! Shared clusters: refused DNS rewrites and several releases managing one Corefile.
//! `shunt run --manage-coredns` against the fake API server: a host the policy refuses gets a
//! `DnsRewriteRefused` Event and no rule; two releases keep two blocks; an old CoreDNS is left alone.

use std::time::Duration;

use http::Method;
use serde_json::{Value, json};

use super::{Cluster, OURS, Recorded, eventually, host, mk_ingress};

const TKE_COREFILE: &str = include_str!("../../../controller/src/dns/testdata/tke.Corefile");
/// A compile after an Ingress change, then the leader's write.
const WITHIN: Duration = Duration::from_secs(5);

fn mk_corefile_config_map() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "kube-system", "name": "coredns"},
           "data": {"Corefile": TKE_COREFILE}})
}

fn corefile(cluster: &Cluster) -> Option<String> {
    cluster.api.get("ConfigMap", "kube-system", "coredns")?["data"]["Corefile"]
        .as_str()
        .map(str::to_string)
}

/// The lines between `release`'s markers (indentation trimmed), if its block is there.
fn block(corefile: &str, release: &str) -> Option<Vec<String>> {
    let begin = format!("# BEGIN shunt {release}");
    let end = format!("# END shunt {release}");
    let mut lines = corefile.lines().map(str::trim).skip_while(|l| *l != begin);
    lines.next()?;
    let body: Vec<String> = lines.by_ref().take_while(|l| *l != end).map(str::to_string).collect();
    corefile.contains(&end).then_some(body)
}

/// The Corefile with every shunt block (markers included) cut out.
fn outside_blocks(corefile: &str) -> String {
    let mut inside = false;
    let mut kept = Vec::new();
    for line in corefile.lines() {
        match line.trim() {
            l if l.starts_with("# BEGIN shunt") => inside = true,
            l if l.starts_with("# END shunt") => inside = false,
            _ if !inside => kept.push(line),
            _ => {}
        }
    }
    kept.join("\n") + "\n"
}

fn rule(host: &str, release_namespace: &str) -> String {
    format!("rewrite name exact {host} shunt.{release_namespace}.svc.cluster.local")
}

/// The Events POSTed in `namespace` about `name` (an Ingress or the ConfigMap), as sent.
fn events_about(requests: &[Recorded], namespace: &str, name: &str) -> Vec<Value> {
    let path = format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events");
    requests
        .iter()
        .filter(|r| r.method == Method::POST && r.path == path && r.body["regarding"]["name"] == name)
        .map(|r| r.body.clone())
        .collect()
}

#[tokio::test]
async fn an_ingress_naming_a_cluster_service_or_a_public_suffix_gets_an_event_and_no_rule() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    api.apply(mk_corefile_config_map());
    api.apply(mk_ingress(
        "shop",
        "steal-api",
        OURS,
        "kubernetes.default.svc.cluster.local",
        "web",
    ));
    api.apply(mk_ingress("shop", "steal-com", OURS, "*.com", "web"));
    let shunt = cluster
        .shunt(
            "shunt-0",
            &["--publish-service", "shunt-system/shunt", "--manage-coredns"],
        )
        .await;

    let written = eventually("the web rule in the Corefile", WITHIN, async || {
        corefile(&cluster).filter(|c| c.contains(&rule(&host("web"), "shunt-system")))
    })
    .await;
    assert_eq!(
        block(&written, "shunt-system/shunt"),
        Some(vec![rule(&host("web"), "shunt-system")]),
        "only the allowed host, no comments in the managed block:\n{written}"
    );
    assert_eq!(outside_blocks(&written), TKE_COREFILE);

    for (name, host, why) in [
        (
            "steal-api",
            "kubernetes.default.svc.cluster.local",
            "in the cluster domain cluster.local",
        ),
        ("steal-com", "*.com", "a wildcard directly under the public suffix com"),
    ] {
        let event = eventually("a DnsRewriteRefused Event", WITHIN, async || {
            events_about(&api.requests(), "shop", name)
                .into_iter()
                .find(|e| e["reason"] == "DnsRewriteRefused")
        })
        .await;
        assert_eq!(event["type"], "Warning");
        let note = event["note"].as_str().unwrap_or_default();
        assert!(note.contains(&format!("host {host} ")) && note.contains(why), "{note}");
    }
    eventually("the refusals in the diagnostics metric", WITHIN, async || {
        metrics(shunt.admin)
            .await
            .filter(|m| m.contains("shunt_ingress_diagnostics{reason=\"DnsRewriteRefused\"} 2\n"))
    })
    .await;
    // Log lines go through a background writer: they may trail the Event and the metric.
    let refusal_lines = || {
        shunt
            .json_logs()
            .into_iter()
            .filter(|l| l["message"] == "Host left out of cluster DNS")
            .count()
    };
    eventually("both refusals logged", WITHIN, async || {
        (refusal_lines() >= 2).then_some(())
    })
    .await;
    assert_eq!(refusal_lines(), 2, "one log line per refused host while it lasts");
    // The block never held them, not even for one write.
    let puts = api
        .requests()
        .into_iter()
        .filter(|r| r.method == Method::PUT && r.path.ends_with("/configmaps/coredns"));
    for put in puts {
        let text = put.body["data"]["Corefile"].as_str().unwrap_or_default().to_string();
        assert!(
            !text.contains("kubernetes.default") && !text.contains(r"\.com\.$"),
            "{text}"
        );
    }
}

/// `GET /metrics` from the admin listener (raw HTTP/1.1, bounded by a timeout).
async fn metrics(admin: std::net::SocketAddr) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(admin).await.ok()?;
        let request = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).await.ok()?;
        Some(response)
    };
    tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .ok()
        .flatten()
}

/// One release: its own Service, Lease and IngressClass, as two Helm releases would have.
fn release_args(team: &str) -> Vec<String> {
    [
        "--publish-service",
        &format!("{team}/shunt"),
        "--manage-coredns",
        "--election-id",
        &format!("{team}-leader"),
        "--ingress-class",
        team,
    ]
    .map(str::to_string)
    .to_vec()
}

#[tokio::test]
async fn two_releases_managing_one_corefile_keep_both_blocks_through_alternating_changes() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    api.apply(mk_corefile_config_map());
    let (a_args, b_args) = (release_args("team-a"), release_args("team-b"));
    let a_args: Vec<&str> = a_args.iter().map(String::as_str).collect();
    let b_args: Vec<&str> = b_args.iter().map(String::as_str).collect();
    let _a = cluster.shunt("team-a-0", &a_args).await;
    let _b = cluster.shunt("team-b-0", &b_args).await;

    let mut last = [None::<String>, None];
    for change in 0..20 {
        let (index, team) = if change % 2 == 0 { (0, "team-a") } else { (1, "team-b") };
        let served = format!("{team}-{change}.example.com");
        api.apply(mk_ingress("shop", team, team, &served, "web"));
        last[index] = Some(served.clone());
        let release = format!("{team}/shunt");
        let wanted = vec![rule(&served, team)];
        eventually(
            &format!("change {change}: {served} in {release}'s block"),
            WITHIN,
            async || corefile(&cluster).filter(|c| block(c, &release).as_ref() == Some(&wanted)),
        )
        .await;
    }

    let text = corefile(&cluster).expect("the Corefile");
    for (index, team) in ["team-a", "team-b"].into_iter().enumerate() {
        let served = last[index].as_deref().expect("each team changed");
        assert_eq!(
            block(&text, &format!("{team}/shunt")),
            Some(vec![rule(served, team)]),
            "{text}"
        );
        assert_eq!(
            text.matches(&format!("# BEGIN shunt {team}/shunt\n")).count(),
            1,
            "{text}"
        );
    }
    assert_eq!(outside_blocks(&text), TKE_COREFILE);
}

#[tokio::test]
async fn coredns_older_than_1_8_4_gets_no_block_but_an_event_and_a_log_line() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    api.apply(mk_corefile_config_map());
    let args = [
        "--publish-service",
        "shunt-system/shunt",
        "--manage-coredns",
        "--coredns-version",
        "1.8.3",
    ];
    let shunt = cluster.shunt("shunt-0", &args).await;
    let event = eventually("a CorednsTooOld Event", WITHIN, async || {
        events_about(&api.requests(), "kube-system", "coredns").pop()
    })
    .await;
    assert_eq!(event["reason"], "CorednsTooOld");
    assert_eq!(event["type"], "Warning");
    assert!(
        event["note"]
            .as_str()
            .is_some_and(|n| n.contains("1.8.3") && n.contains("1.8.4")),
        "{event}"
    );
    eventually("the refusal logged", WITHIN, async || {
        shunt
            .json_logs()
            .iter()
            .any(|l| l["message"] == "CoreDNS too old for the rewrite rules; not writing them")
            .then_some(())
    })
    .await;
    assert_eq!(corefile(&cluster).as_deref(), Some(TKE_COREFILE));
    assert!(
        api.requests()
            .iter()
            .all(|r| !(r.method == Method::PUT && r.path.contains("/configmaps/"))),
        "nothing written"
    );
}

fn mk_coredns_deployment(image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "kube-system", "name": "coredns"},
           "spec": {"selector": {"matchLabels": {"k8s-app": "kube-dns"}}, "template": {"spec": {"containers": [
               {"name": "coredns", "image": image}]}}}})
}

#[tokio::test]
async fn the_coredns_deployments_image_decides_over_the_flag() {
    for (image, flag, writes) in [
        ("registry.k8s.io/coredns/coredns:v1.8.0", "1.11.1", false),
        ("ccr.ccs.tencentyun.com/tkeimages/coredns:1.8.4-tke.1", "1.8.0", true),
        // No version in the tag: the flag says.
        ("coredns/coredns:latest", "1.6.9", false),
    ] {
        let cluster = Cluster::start(&["web"]).await;
        let api = &cluster.api;
        api.apply(mk_corefile_config_map());
        api.apply(mk_coredns_deployment(image));
        let args = [
            "--publish-service",
            "shunt-system/shunt",
            "--manage-coredns",
            "--coredns-version",
            flag,
        ];
        let _shunt = cluster.shunt("shunt-0", &args).await;
        let outcome = eventually(&format!("{image}: a block or an Event"), WITHIN, async || {
            let written = corefile(&cluster).is_some_and(|c| c.contains(&rule(&host("web"), "shunt-system")));
            let refused = !events_about(&api.requests(), "kube-system", "coredns").is_empty();
            (written || refused).then_some(written)
        })
        .await;
        assert_eq!(outcome, writes, "{image} with --coredns-version {flag}");
    }
}

#[tokio::test]
async fn a_block_an_older_shunt_wrote_is_adopted_not_duplicated() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let old = TKE_COREFILE.replace(
        "    cache 30\n",
        "    cache 30\n    # BEGIN shunt\n    rewrite name exact gone.example x\n    # END shunt\n",
    );
    let mut config_map = mk_corefile_config_map();
    config_map["data"]["Corefile"] = json!(old);
    api.apply(config_map);
    let _shunt = cluster
        .shunt(
            "shunt-0",
            &["--publish-service", "shunt-system/shunt", "--manage-coredns"],
        )
        .await;
    let written = eventually("the web rule in the Corefile", WITHIN, async || {
        corefile(&cluster).filter(|c| c.contains(&rule(&host("web"), "shunt-system")))
    })
    .await;
    let expected = TKE_COREFILE.replace(
        "    cache 30\n",
        &format!(
            "    cache 30\n    # BEGIN shunt shunt-system/shunt\n    {}\n    # END shunt shunt-system/shunt\n",
            rule(&host("web"), "shunt-system")
        ),
    );
    assert_eq!(written, expected);
}
