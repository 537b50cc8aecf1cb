//! `CorednsWriter::sync` against a mocked API server: what it reads, what it writes, and
//! that it writes nothing when nothing changed.

use http::{Method, StatusCode};
use serde_json::{Value, json};
use shunt_spec::HostMatch;

use super::*;

const TKE: &str = include_str!("../testdata/tke.Corefile");
const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

fn stanza(hosts: &[&str]) -> Stanza {
    let hosts: Vec<HostMatch> = hosts.iter().map(|h| HostMatch::from_rule_host(h)).collect();
    let plan = crate::dns::DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&hosts);
    Stanza::new(&"shunt-system/shunt".parse().expect("valid"), &plan, TARGET)
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
        .sync(|_zones| stanza.clone(), RuleForm::AllTypes)
        .await
        .map(|synced| synced.wrote)
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
        assert!(corefile.starts_with(&format!(".:53 {{\n    # BEGIN shunt shunt-system/shunt\n    rewrite name exact shop.example.com {TARGET}\n    # END shunt shunt-system/shunt\n    errors\n")));
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
        let ours = body["data"]["shunt-system.shunt.override"].as_str().expect("our key");
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
async fn the_key_an_older_shunt_wrote_is_replaced_by_the_release_key() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let legacy =
            "# BEGIN shunt (written by shunt; edits are overwritten)\nrewrite name exact old.example x\n# END shunt\n";
        let current = mk_config_map(
            "coredns-custom",
            json!({"shunt.override": legacy, "team.override": "log\n"}),
        );
        api.answer(Method::GET, &path("coredns-custom"), StatusCode::OK, current)
            .await;
        let body = api.echo(Method::PUT, &path("coredns-custom"), StatusCode::OK).await;
        assert_eq!(body["data"]["shunt.override"], Value::Null, "adopted, not duplicated");
        assert_eq!(body["data"]["team.override"], "log\n");
        assert!(body["data"]["shunt-system.shunt.override"].is_string());
        api
    };
    let wrote = verify(
        scenario,
        sync_once(
            client,
            CorednsTarget::Custom,
            "coredns-custom",
            stanza(&["a.example.com"]),
        ),
    )
    .await;
    assert!(wrote.expect("synced"));
}

#[tokio::test]
async fn the_corefiles_kubernetes_zones_shape_the_stanza_it_writes() {
    let (client, mut api) = mk_client();
    let corefile = TKE.replace(
        "kubernetes cluster.local.",
        "kubernetes corp.example.com cluster.local.",
    );
    let scenario = async move {
        let current = mk_config_map("coredns", json!({"Corefile": corefile}));
        api.answer(Method::GET, &path("coredns"), StatusCode::OK, current).await;
        let body = api.echo(Method::PUT, &path("coredns"), StatusCode::OK).await;
        let written = body["data"]["Corefile"].as_str().expect("a Corefile").to_string();
        assert!(written.contains("exact shop.example.com") && !written.contains("api.corp.example.com"));
        api
    };
    let hosts = [
        HostMatch::from_rule_host("shop.example.com"),
        HostMatch::from_rule_host("api.corp.example.com"),
    ];
    let build = |zones: &[String]| {
        assert_eq!(zones, ["corp.example.com", "cluster.local", "in-addr.arpa", "ip6.arpa"]);
        let policy = crate::dns::DnsPolicy::new("cluster.local", Vec::new(), Vec::new());
        let plan = policy.with_kubernetes_zones(zones).plan(&hosts);
        Stanza::new(&"shunt-system/shunt".parse().expect("valid"), &plan, TARGET)
    };
    let writer = CorednsWriter::new(client, "kube-system", "coredns", CorednsTarget::Corefile);
    let synced = verify(scenario, async move { writer.sync(build, RuleForm::AllTypes).await })
        .await
        .expect("synced");
    assert_eq!(synced.stanza.refused().len(), 1);
}

#[tokio::test]
async fn a_write_that_lost_a_race_is_redone_from_a_fresh_read() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let current = mk_config_map("coredns", json!({"Corefile": TKE}));
        api.answer(Method::GET, &path("coredns"), StatusCode::OK, current.clone())
            .await;
        api.answer(
            Method::PUT,
            &path("coredns"),
            StatusCode::CONFLICT,
            mk_status(409, "Conflict"),
        )
        .await;
        api.answer(Method::GET, &path("coredns"), StatusCode::OK, current).await;
        api.echo(Method::PUT, &path("coredns"), StatusCode::OK).await;
        api
    };
    let wrote = verify(
        scenario,
        sync_once(client, CorednsTarget::Corefile, "coredns", stanza(&["a.example.com"])),
    )
    .await;
    assert!(wrote.expect("synced on the second attempt"));
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
