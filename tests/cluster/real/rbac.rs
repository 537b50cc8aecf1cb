//! The chart's RBAC rules (`deploy/helm/shunt/files/rbac-rules.yaml`), bound to a ServiceAccount
//! whose TokenRequest token `shunt run` uses: the real API server's RBAC authorizer decides every
//! request, and everything shunt does (watch, status, Events, Lease, managed CoreDNS) succeeds.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    OURS,
    envtest::{Kube, Real, client},
    eventually, mk_ingress, mk_service,
};

const RULES: &str = include_str!("../../../deploy/helm/shunt/files/rbac-rules.yaml");
const COREFILE: &str = ".:53 {\n    errors\n    forward . /etc/resolv.conf\n    cache 30\n    reload\n}\n";
const WITHIN: Duration = Duration::from_secs(15);

/// Roles from the chart's rules for ServiceAccount `shunt` of the test's namespace.
/// The rules file's cluster-wide rules as the chart grants them by default: the `cluster` set and
/// the Gateway API's (`gatewayAPI.enabled`).
pub(super) fn default_cluster_rules(rules: &Value) -> Value {
    let mut cluster = rules["cluster"].as_array().expect("a list of rules").clone();
    cluster.extend(rules["gatewayAPI"].as_array().expect("a list of rules").iter().cloned());
    Value::Array(cluster)
}

async fn bind_chart_rules(real: &Real) {
    let rules: Value = serde_saphyr::from_str(RULES).expect("rbac-rules.yaml parses");
    let ns = &real.ns;
    let subject = json!([{"kind": "ServiceAccount", "name": "shunt", "namespace": ns}]);
    let cluster_role = format!("shunt-{ns}");
    let rbac = "rbac.authorization.k8s.io/v1";
    let cluster = default_cluster_rules(&rules);
    real.apply(
        json!({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": cluster_role}, "rules": cluster}),
    )
    .await;
    real.apply(json!({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": cluster_role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role}, "subjects": subject}))
        .await;
    // The namespaced rules; the CoreDNS ones limited to the one ConfigMap and Deployment.
    let only_coredns = |rules: &Value| {
        let mut rules = rules.clone();
        for rule in rules.as_array_mut().expect("a list of rules") {
            rule["resourceNames"] = json!(["coredns"]);
        }
        rules
    };
    for (role, rules) in [
        ("shunt", rules["namespace"].clone()),
        ("shunt-coredns", only_coredns(&rules["coredns"])),
        ("shunt-coredns-deployment", only_coredns(&rules["corednsDeployment"])),
        // The chart's Role on node-local-dns's ConfigMap, by name (shunt reads it to see whether it runs).
        ("shunt-node-local-dns", {
            let mut node_local = rules["coredns"].clone();
            for rule in node_local.as_array_mut().expect("a list of rules") {
                rule["resourceNames"] = json!(["node-local-dns"]);
            }
            node_local
        }),
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
}

/// A token for ServiceAccount `name` from the TokenRequest API.
async fn service_account_token(real: &Real, name: &str) -> String {
    real.apply(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"namespace": real.ns, "name": name}}))
        .await;
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}});
    let request = http::Request::post(format!("/api/v1/namespaces/{}/serviceaccounts/{name}/token", real.ns))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body).expect("JSON"))
        .expect("a request");
    let answer: Value = real.kube.client.request(request).await.expect("a TokenRequest");
    answer["status"]["token"].as_str().expect("a token").to_string()
}

fn mk_coredns_deployment(ns: &str) -> Value {
    let labels = json!({"k8s-app": "kube-dns"});
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": ns, "name": "coredns"},
        "spec": {"selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.13.1"}]},
        }},
    })
}

#[tokio::test]
async fn shunt_with_the_charts_rules_and_a_service_account_token_does_everything_it_needs() {
    let Some(real) = Real::start("rbac").await else { return };
    let ns = &real.ns;
    bind_chart_rules(&real).await;
    let token = service_account_token(&real, "shunt").await;
    real.apply(mk_service(ns, "shunt")).await;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_ingress(ns, "web", OURS, "web.example", "web")).await;
    real.apply(mk_ingress(ns, "broken", OURS, "broken.example", "missing"))
        .await;
    real.apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns, "name": "coredns"}, "data": {"Corefile": COREFILE}}))
        .await;
    real.apply(mk_coredns_deployment(ns)).await;

    let kubeconfig = real.plane.kubeconfig(real.dir.path(), "shunt-sa", &token);
    let publish = format!("{ns}/shunt");
    let coredns = format!("{ns}/coredns");
    let node_local = format!("{ns}/node-local-dns");
    let args = [
        "--publish-service",
        &publish,
        "--manage-coredns",
        "--coredns-configmap",
        &coredns,
        "--node-local-dns-configmap",
        &node_local,
    ];
    let shunt = real.shunt_as(kubeconfig, "shunt-0", &args).await;

    let cluster_ip = real.kube.get("Service", "shunt").await.expect("stored")["spec"]["clusterIP"].clone();
    eventually("web's status from the Service's ClusterIP", WITHIN, async || {
        let web = real.kube.get("Ingress", "web").await?;
        (web["status"]["loadBalancer"]["ingress"] == json!([{"ip": cluster_ip}])).then_some(())
    })
    .await;
    eventually("the Event about broken", WITHIN, async || {
        let events = real.kube.list("Event", "").await;
        events.iter().any(|e| e["regarding"]["name"] == "broken").then_some(())
    })
    .await;
    eventually("the Corefile rule for web.example", WITHIN, async || {
        let map = real.kube.get("ConfigMap", "coredns").await?;
        map["data"]["Corefile"].as_str()?.contains("web.example").then_some(())
    })
    .await;
    let lease = real.kube.get("Lease", "shunt-leader").await.expect("the Lease");
    assert_eq!(lease["spec"]["holderIdentity"], "shunt-0");
    let refused: Vec<String> = shunt
        .logs()
        .into_iter()
        // The API server's refusal says "forbidden" (reason Forbidden, code 403); a bare "403"
        // would also match a port such as 127.0.0.1:40389.
        .filter(|line| line.to_ascii_lowercase().contains("forbidden"))
        .collect();
    assert!(refused.is_empty(), "requests RBAC refused:\n{}", refused.join("\n"));

    // The token really is limited: what the rules do not grant is refused.
    let limited = Kube {
        client: client(&real.plane.url(), &token, &real.plane.pki.ca_pem),
        namespace: ns.clone(),
    };
    let read = limited.api("ConfigMap").get_opt("kube-root-ca.crt").await;
    assert!(
        matches!(&read, Err(kube::Error::Api(status)) if status.code == 403),
        "{read:?}"
    );
    let delete = limited.api("Ingress").delete("web", &Default::default()).await;
    assert!(
        matches!(&delete, Err(kube::Error::Api(status)) if status.code == 403),
        "{delete:?}"
    );
}
