//! The zone list (examples and properties over generated host sets) and the block in the
//! node-local-dns Corefile of node-cache's documented template (the one Tencent's TKE guide uses).

use proptest::prelude::*;

use super::*;
use crate::dns::policy::is_public_suffix;

const TENCENT: &str = include_str!("../testdata/tencent-node-local-dns.Corefile");

fn mk_release() -> Release {
    "shunt-system/shunt".parse().expect("valid")
}

fn policy() -> DnsPolicy {
    DnsPolicy::new("cluster.local", Vec::new(), Vec::new())
}

fn hosts(names: &[&str]) -> Vec<HostMatch> {
    names.iter().map(|name| HostMatch::from_rule_host(name)).collect()
}

fn rewritten(names: &[&str]) -> Vec<HostMatch> {
    policy().plan(&hosts(names)).rewrite
}

#[test]
fn exact_hosts_are_their_own_zones_and_wildcards_give_their_suffix() {
    let zones = zones(
        &rewritten(&[
            "shop.example.com",
            "*.apps.example.com",
            "a.apps.example.com",
            "api.example.org",
        ]),
        &policy(),
    );
    assert_eq!(zones, ["api.example.org", "apps.example.com", "shop.example.com"]);
}

#[test]
fn cluster_zones_and_public_suffixes_never_become_zones_even_if_handed_in() {
    let handed = hosts(&[
        "kubernetes.default.svc.cluster.local",
        "*.com",
        "co.uk",
        "*.in-addr.arpa",
    ]);
    assert!(zones(&handed, &policy()).is_empty(), "{:?}", zones(&handed, &policy()));
}

#[test]
fn the_block_copies_bind_and_forward_from_cluster_local_placeholders_kept() {
    let zones = vec!["apps.example.com".to_string(), "shop.example.com".to_string()];
    let edited = replace(TENCENT, &mk_release(), &zones).expect("edited");
    assert_eq!(
        edited,
        format!(
            "{TENCENT}# BEGIN shunt shunt-system/shunt\n\
             apps.example.com:53 shop.example.com:53 {{\n    errors\n\
             \x20   bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__\n\
             \x20   forward . __PILLAR__CLUSTER__DNS__ {{\n            force_tcp\n    }}\n}}\n\
             # END shunt shunt-system/shunt\n"
        )
    );
    let again = replace(&edited, &mk_release(), &zones[..1]).expect("edited");
    assert!(again.starts_with(TENCENT), "other lines kept");
    assert_eq!(again.matches("# BEGIN shunt").count(), 1, "replaced in place");
    assert!(again.contains("\napps.example.com:53 {\n"), "{again}");
    let emptied = replace(&again, &mk_release(), &[]).expect("edited");
    assert_eq!(
        emptied,
        format!("{TENCENT}# BEGIN shunt shunt-system/shunt\n# END shunt shunt-system/shunt\n")
    );
}

#[test]
fn without_a_corefile_the_block_has_node_caches_standard_placeholders() {
    let printed = block(&mk_release(), &["shop.example.com".to_string()], None);
    assert_eq!(
        printed,
        "# BEGIN shunt shunt-system/shunt\nshop.example.com:53 {\n    errors\n    \
         bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__\n    forward . __PILLAR__CLUSTER__DNS__ {\n        force_tcp\n    }\n}\n\
         # END shunt shunt-system/shunt\n"
    );
}

fn label() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("com".to_string()),
        Just("co".to_string()),
        Just("uk".to_string()),
        Just("example".to_string()),
        Just("apps".to_string()),
        Just("svc".to_string()),
        Just("cluster".to_string()),
        Just("local".to_string()),
        Just("arpa".to_string()),
        Just("in-addr".to_string()),
        "[a-z]{1,3}",
    ]
}

fn host() -> impl Strategy<Value = String> {
    (any::<u8>(), prop::collection::vec(label(), 1..5)).prop_map(|(kind, labels)| {
        let name = labels.join(".");
        match kind % 3 {
            0 => format!("*.{name}"),
            _ => name,
        }
    })
}

/// The zone a rewritten host itself names: the exact name, or the wildcard's suffix.
fn own_zone(host: &HostMatch) -> &str {
    match host {
        HostMatch::Exact(name) | HostMatch::Wildcard(name) | HostMatch::DeepWildcard(name) => name,
        HostMatch::Any => "",
    }
}

proptest! {
    #[test]
    fn zones_are_never_above_a_served_names_own_zone_nor_cluster_or_public_suffix_zones(
        names in prop::collection::vec(host(), 0..8),
    ) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let rewrite = rewritten(&names);
        let zones = zones(&rewrite, &policy());
        for zone in &zones {
            prop_assert!(rewrite.iter().any(|host| own_zone(host) == zone), "{zone} is some host's own zone");
            prop_assert!(!is_public_suffix(zone), "{zone} is a public suffix");
            for cluster in ["cluster.local", "in-addr.arpa", "ip6.arpa"] {
                prop_assert!(zone != cluster && !is_under(zone, cluster) && !is_under(cluster, zone), "{zone} vs {cluster}");
            }
        }
        for host in &rewrite {
            let own = own_zone(host);
            prop_assert!(zones.iter().any(|zone| zone == own || is_under(own, zone)), "{own} is carried");
        }
    }
}

mod api {
    use http::{Method, StatusCode};
    use serde_json::json;

    use super::*;
    use crate::dns::nodelocal::managed::{NodeLocal, NodeLocalWriter};

    crate::mock_api_server!();

    const PATH: &str = "/api/v1/namespaces/kube-system/configmaps/node-local-dns";

    fn mk_writer(client: kube::Client, manage: bool) -> NodeLocalWriter {
        let at = ("kube-system".to_string(), "node-local-dns".to_string());
        NodeLocalWriter::new(client, at, manage, crate::dns::DnsMetrics::default())
    }

    /// One sync, the writer (and its client) dropped after it.
    async fn sync_once(mut writer: NodeLocalWriter) -> NodeLocal {
        writer.sync(&mk_release(), &["shop.example.com".to_string()]).await
    }

    fn mk_config_map(corefile: &str) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "node-local-dns", "namespace": "kube-system", "resourceVersion": "3"},
               "data": {"Corefile": corefile}})
    }

    #[tokio::test]
    async fn an_absent_configmap_is_left_absent() {
        let (client, mut api) = mk_client();
        let scenario = async move {
            api.answer(Method::GET, PATH, StatusCode::NOT_FOUND, mk_status(404, "NotFound"))
                .await;
            api
        };
        assert_eq!(
            verify(scenario, sync_once(mk_writer(client, true))).await,
            NodeLocal::Absent
        );
    }

    #[tokio::test]
    async fn a_conflict_is_retried_from_a_fresh_read() {
        let (client, mut api) = mk_client();
        let scenario = async move {
            api.answer(Method::GET, PATH, StatusCode::OK, mk_config_map(TENCENT))
                .await;
            api.answer(Method::PUT, PATH, StatusCode::CONFLICT, mk_status(409, "Conflict"))
                .await;
            api.answer(Method::GET, PATH, StatusCode::OK, mk_config_map(TENCENT))
                .await;
            let body = api.echo(Method::PUT, PATH, StatusCode::OK).await;
            assert_eq!(
                body["metadata"]["resourceVersion"], "3",
                "an update, never a blind overwrite"
            );
            let corefile = body["data"]["Corefile"].as_str().expect("a Corefile");
            assert!(
                corefile.starts_with(TENCENT) && corefile.contains("\nshop.example.com:53 {\n"),
                "{corefile}"
            );
            api
        };
        let state = verify(scenario, sync_once(mk_writer(client, true))).await;
        assert_eq!(state, NodeLocal::Managed { wrote: true });
    }

    #[tokio::test]
    async fn left_alone_or_forbidden_is_reported_as_not_managed_with_an_event() {
        let metrics = crate::dns::DnsMetrics::default();
        let (client, mut api) = mk_client();
        let scenario = async move {
            api.answer(Method::GET, PATH, StatusCode::OK, mk_config_map(TENCENT))
                .await;
            let event = api
                .echo(
                    Method::POST,
                    "/apis/events.k8s.io/v1/namespaces/kube-system/events",
                    StatusCode::CREATED,
                )
                .await;
            assert_eq!(event["reason"], "NodeLocalDnsNotManaged");
            assert_eq!(event["regarding"]["name"], "node-local-dns");
            api
        };
        let at = ("kube-system".to_string(), "node-local-dns".to_string());
        let writer = NodeLocalWriter::new(client, at, false, metrics.clone());
        let state = verify(scenario, sync_once(writer)).await;
        assert!(matches!(state, NodeLocal::NotManaged(_)), "{state:?}");
        assert_eq!(metrics.node_local_unmanaged.get(), 1);
    }
}
