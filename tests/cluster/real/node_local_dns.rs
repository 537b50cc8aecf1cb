//! The managed node-local-dns block against a real API server: written at top level of its
//! Corefile with the zones of the served hosts, updated when they change, every other line and
//! key kept, a concurrent writer's updates never lost (resourceVersion conflicts are retried), and
//! shunt's ServiceAccount, with the chart's rules, reaching only that ConfigMap by name.

use std::time::Duration;

use kube::api::PostParams;
use serde_json::{Value, json};

use super::{
    OURS,
    envtest::{Kube, Real, client},
    eventually, mk_ingress, mk_service,
};

const TENCENT: &str = include_str!("../../../controller/src/dns/testdata/tencent-node-local-dns.Corefile");
const COREFILE: &str = ".:53 {\n    errors\n    forward . /etc/resolv.conf\n    cache 30\n    reload\n}\n";
const RULES: &str = include_str!("../../../deploy/helm/shunt/files/rbac-rules.yaml");
const WITHIN: Duration = Duration::from_secs(15);

fn mk_config_map(ns: &str, name: &str, corefile: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns, "name": name},
           "data": {"Corefile": corefile, "other-key": "kept"}})
}

/// `shunt run --manage-coredns` with both ConfigMaps in the test's namespace.
fn args(ns: &str) -> [String; 9] {
    [
        "--publish-service".into(),
        format!("{ns}/shunt"),
        "--manage-coredns".into(),
        "--coredns-configmap".into(),
        format!("{ns}/coredns"),
        "--node-local-dns-configmap".into(),
        format!("{ns}/node-local-dns"),
        "--coredns-version".into(),
        "1.13.1".into(),
    ]
}

async fn node_local_corefile(kube: &Kube) -> Option<String> {
    let map = kube.get("ConfigMap", "node-local-dns").await?;
    map["data"]["Corefile"].as_str().map(str::to_string)
}

async fn setup(real: &Real) {
    let ns = &real.ns;
    real.apply(mk_service(ns, "shunt")).await;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_ingress(ns, "shop", OURS, "shop.example.com", "web"))
        .await;
    real.apply(mk_config_map(ns, "coredns", COREFILE)).await;
    real.apply(mk_config_map(ns, "node-local-dns", TENCENT)).await;
}

#[tokio::test]
async fn the_block_follows_the_served_zones_and_everything_else_stays() {
    let Some(real) = Real::start("nodelocal").await else {
        return;
    };
    let ns = &real.ns;
    setup(&real).await;
    let args = args(ns);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _shunt = real.shunt("shunt-0", &args).await;
    let begin = format!("# BEGIN shunt {ns}/shunt\n");
    let corefile = eventually("the node-local-dns block", WITHIN, async || {
        node_local_corefile(&real.kube).await.filter(|c| c.contains(&begin))
    })
    .await;
    assert_eq!(
        corefile,
        format!(
            "{TENCENT}{begin}shop.example.com:53 {{\n    errors\n    bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__\n\
             \x20   forward . __PILLAR__CLUSTER__DNS__ {{\n            force_tcp\n    }}\n}}\n# END shunt {ns}/shunt\n"
        )
    );

    real.apply(mk_ingress(ns, "apps", OURS, "*.apps.example.com", "web"))
        .await;
    let corefile = eventually("the wildcard's zone", WITHIN, async || {
        node_local_corefile(&real.kube)
            .await
            .filter(|c| c.contains("\napps.example.com:53 shop.example.com:53 {\n"))
    })
    .await;
    assert!(corefile.starts_with(TENCENT), "other lines kept:\n{corefile}");
    assert_eq!(corefile.matches("# BEGIN shunt").count(), 1, "{corefile}");
    let map = real.kube.get("ConfigMap", "node-local-dns").await.expect("stored");
    assert_eq!(map["data"]["other-key"], "kept");
}

#[tokio::test]
async fn a_concurrent_writers_updates_are_never_lost() {
    let Some(real) = Real::start("nodelocal-race").await else {
        return;
    };
    let ns = &real.ns;
    setup(&real).await;
    // Another writer updating the same ConfigMap (with the resourceVersion it read) while shunt
    // starts and writes: some of shunt's updates meet 409 and are redone from a fresh read.
    let writer = Kube {
        client: real.kube.client.clone(),
        namespace: ns.clone(),
    };
    let racing = tokio::spawn(async move {
        let api = writer.api("ConfigMap");
        let mut written = 0;
        while written < 40 {
            let mut map = api.get("node-local-dns").await.expect("readable");
            map.data["data"]["other-writer"] = json!(written.to_string());
            if api
                .replace("node-local-dns", &PostParams::default(), &map)
                .await
                .is_ok()
            {
                written += 1;
            }
        }
    });
    let args = args(ns);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _shunt = real.shunt("shunt-0", &args).await;
    real.apply(mk_ingress(ns, "api", OURS, "api.example.com", "web")).await;
    racing.await.expect("the other writer finishes");
    let map = eventually("both writers' changes", WITHIN, async || {
        let map = real.kube.get("ConfigMap", "node-local-dns").await?;
        let corefile = map["data"]["Corefile"].as_str()?;
        corefile
            .contains("api.example.com:53 shop.example.com:53 {")
            .then_some(map)
    })
    .await;
    assert_eq!(map["data"]["other-writer"], "39", "no update of the other writer lost");
}

#[tokio::test]
async fn the_charts_rules_reach_node_local_dns_only_by_name() {
    let Some(real) = Real::start("nodelocal-rbac").await else {
        return;
    };
    let ns = &real.ns;
    setup(&real).await;
    let rules: Value = serde_saphyr::from_str(RULES).expect("rbac-rules.yaml parses");
    let subject = json!([{"kind": "ServiceAccount", "name": "shunt", "namespace": ns}]);
    let rbac = "rbac.authorization.k8s.io/v1";
    let cluster_role = format!("shunt-{ns}");
    real.apply(json!({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": cluster_role}, "rules": super::rbac::default_cluster_rules(&rules)}))
        .await;
    real.apply(json!({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": cluster_role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role}, "subjects": subject}))
        .await;
    // As the chart renders them: the release's rules, and the coredns rules by name for each
    // ConfigMap (the Deployment read is left out: --coredns-version says the version).
    let by_name = |name: &str| {
        let mut rules = rules["coredns"].clone();
        for rule in rules.as_array_mut().expect("a list") {
            rule["resourceNames"] = json!([name]);
        }
        rules
    };
    for (role, rules) in [
        ("shunt", rules["namespace"].clone()),
        ("shunt-coredns", by_name("coredns")),
        ("shunt-node-local-dns", by_name("node-local-dns")),
    ] {
        real.apply(
            json!({"apiVersion": rbac, "kind": "Role", "metadata": {"namespace": ns, "name": role}, "rules": rules}),
        )
        .await;
        real.apply(
            json!({"apiVersion": rbac, "kind": "RoleBinding", "metadata": {"namespace": ns, "name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}, "subjects": subject}),
        )
        .await;
    }
    real.apply(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"namespace": ns, "name": "shunt"}}))
        .await;
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}});
    let request = http::Request::post(format!("/api/v1/namespaces/{ns}/serviceaccounts/shunt/token"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body).expect("JSON"))
        .expect("a request");
    let answer: Value = real.kube.client.request(request).await.expect("a TokenRequest");
    let token = answer["status"]["token"].as_str().expect("a token").to_string();

    let kubeconfig = real.plane.kubeconfig(real.dir.path(), "shunt-sa", &token);
    let args = args(ns);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let shunt = real.shunt_as(kubeconfig, "shunt-0", &args).await;
    eventually(
        "the node-local-dns block, written with the chart's rules",
        WITHIN,
        async || {
            node_local_corefile(&real.kube)
                .await
                .filter(|c| c.contains("shop.example.com:53 {"))
        },
    )
    .await;
    let refused: Vec<String> = shunt.logs().into_iter().filter(|l| l.contains("forbidden")).collect();
    assert!(refused.is_empty(), "requests RBAC refused:\n{}", refused.join("\n"));
    // Another ConfigMap in the same namespace stays out of reach.
    let limited = Kube {
        client: client(&real.plane.url(), &token, &real.plane.pki.ca_pem),
        namespace: ns.clone(),
    };
    real.apply(mk_config_map(ns, "unrelated", COREFILE)).await;
    let read = limited.api("ConfigMap").get_opt("unrelated").await;
    assert!(
        matches!(&read, Err(kube::Error::Api(status)) if status.code == 403),
        "{read:?}"
    );
}
