//! `CorednsWriter::sync` against a mocked API server: what it reads, what it writes, and
//! that it writes nothing when nothing changed.

use http::{Method, StatusCode};
use serde_json::{Value, json};
use shunt_proxy::routes::spec::HostMatch;

use super::*;

const TKE: &str = include_str!("../testdata/tke.Corefile");
const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

fn stanza(hosts: &[&str]) -> Stanza {
    let hosts: Vec<HostMatch> = hosts.iter().map(|h| HostMatch::from_rule_host(h)).collect();
    Stanza::new(&hosts, TARGET, &[])
}

fn mk_config_map(name: &str, data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "kube-system", "resourceVersion": "7"},
        "data": data,
    })
}

fn path(name: &str) -> String {
    format!("/api/v1/namespaces/kube-system/configmaps/{name}")
}

async fn sync_once(client: Client, target: CorednsTarget, name: &str, stanza: Stanza) -> Result<bool, CorednsError> {
    CorednsWriter::new(client, "kube-system", name, target)
        .sync(&stanza)
        .await
}

#[tokio::test]
async fn the_corefile_gets_the_block_with_the_version_it_read() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let current = mk_config_map("coredns", json!({"Corefile": TKE}));
        api.answer(Method::GET, &path("coredns"), StatusCode::OK, current).await;
        let body = api.echo(Method::PUT, &path("coredns"), StatusCode::OK).await;
        assert_eq!(
            body["metadata"]["resourceVersion"], "7",
            "an update, never a blind overwrite"
        );
        let corefile = body["data"]["Corefile"].as_str().expect("a Corefile");
        assert!(corefile.starts_with(&format!(".:53 {{\n    # BEGIN shunt\n    rewrite name exact shop.example.com {TARGET}\n    # END shunt\n    errors\n")));
        api
    };
    let wrote = verify(
        scenario,
        sync_once(
            client,
            CorednsTarget::Corefile,
            "coredns",
            stanza(&["shop.example.com"]),
        ),
    )
    .await;
    assert!(wrote.expect("synced"));
}

#[tokio::test]
async fn an_up_to_date_configmap_is_not_written() {
    let (client, mut api) = mk_client();
    let done = replace_block(TKE, &stanza(&["shop.example.com"])).expect("edits");
    let scenario = async move {
        api.answer(
            Method::GET,
            &path("coredns"),
            StatusCode::OK,
            mk_config_map("coredns", json!({"Corefile": done})),
        )
        .await;
        api
    };
    let wrote = verify(
        scenario,
        sync_once(
            client,
            CorednsTarget::Corefile,
            "coredns",
            stanza(&["shop.example.com"]),
        ),
    )
    .await;
    assert!(!wrote.expect("synced"), "nothing to write");
}

#[tokio::test]
async fn the_custom_configmap_gets_our_key_and_keeps_the_others() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let current = mk_config_map("coredns-custom", json!({"team.override": "log\n"}));
        api.answer(Method::GET, &path("coredns-custom"), StatusCode::OK, current)
            .await;
        let body = api.echo(Method::PUT, &path("coredns-custom"), StatusCode::OK).await;
        assert_eq!(body["data"]["team.override"], "log\n");
        let ours = body["data"]["shunt.override"].as_str().expect("our key");
        assert!(
            ours.contains(&format!("\nrewrite name exact shop.example.com {TARGET}\n")),
            "{ours}"
        );
        api
    };
    let wrote = verify(
        scenario,
        sync_once(
            client,
            CorednsTarget::Custom,
            "coredns-custom",
            stanza(&["shop.example.com"]),
        ),
    )
    .await;
    assert!(wrote.expect("synced"));
}

#[tokio::test]
async fn a_missing_configmap_is_an_error_and_nothing_is_created() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.answer(
            Method::GET,
            &path("coredns-custom"),
            StatusCode::NOT_FOUND,
            mk_status(404, "NotFound"),
        )
        .await;
        api
    };
    let result = verify(
        scenario,
        sync_once(client, CorednsTarget::Custom, "coredns-custom", stanza(&[])),
    )
    .await;
    assert!(matches!(result, Err(CorednsError::Missing(name)) if name == "kube-system/coredns-custom"));
}

#[tokio::test]
async fn a_corefile_shunt_cannot_place_its_block_in_is_left_alone() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let odd = mk_config_map("coredns", json!({"Corefile": "example.org {\n    whoami\n}\n"}));
        api.answer(Method::GET, &path("coredns"), StatusCode::OK, odd).await;
        api
    };
    let result = verify(
        scenario,
        sync_once(client, CorednsTarget::Corefile, "coredns", stanza(&["a.example.com"])),
    )
    .await;
    assert!(matches!(result, Err(CorednsError::Corefile { .. })), "{result:?}");
}

crate::mock_api_server!();
