//! The chart's RBAC rules (`deploy/helm/shunt/files/rbac-rules.yaml`) against every request
//! `shunt run` really makes: a request they do not allow would be a 403 in a real cluster, and a
//! verb no request uses is a grant too many.

use std::time::Duration;

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::{Cluster, OURS, Recorded, host, mk_ingress, poll_until};

const RULES: &str = include_str!("../../../deploy/helm/shunt/files/rbac-rules.yaml");
/// The namespace `--pod-namespace` gives every replica in these tests: where the Lease lives.
const RELEASE_NAMESPACE: &str = "shunt-system";
/// A leader renews its Lease every 2 s.
const RENEWAL: Duration = Duration::from_secs(8);
/// 4 labels, 253 characters.
const LONGEST_NAME: [&str; 4] = [
    LABEL_63,
    LABEL_63,
    LABEL_63,
    "last-label-of-sixty-one-characters-making-two-hundred-fifty-3",
];
const LABEL_63: &str = "a-label-of-sixty-three-characters-which-is-the-most-one-may-hav";

#[derive(Debug, Deserialize)]
struct Rules {
    /// Granted in every namespace (a ClusterRole).
    cluster: Vec<Rule>,
    /// Granted in the release namespace only (a Role).
    namespace: Vec<Rule>,
    /// With --manage-coredns: granted on the one CoreDNS ConfigMap (a Role with resourceNames).
    coredns: Vec<Rule>,
    /// With --manage-coredns: granted on the `coredns` Deployment, for its image's version.
    #[serde(rename = "corednsDeployment")]
    coredns_deployment: Vec<Rule>,
    /// Gateway API (`gatewayAPI.enabled`, the chart's default): a ClusterRole of its own.
    #[serde(rename = "gatewayAPI")]
    gateway_api: Vec<Rule>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    api_groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
}

/// What RBAC sees in a request: API group, resource (with `/subresource`), verb, namespace.
#[derive(Debug, PartialEq, Eq)]
struct Access {
    group: String,
    resource: String,
    verb: &'static str,
    namespace: Option<String>,
}

impl Access {
    fn of(request: &Recorded) -> Access {
        let segments: Vec<&str> = request.path.trim_start_matches('/').split('/').collect();
        let (group, rest) = match segments.as_slice() {
            ["api", _version, rest @ ..] => ("", rest),
            ["apis", group, _version, rest @ ..] => (*group, rest),
            _ => panic!("not an API path: {}", request.path),
        };
        let (namespace, rest) = match rest {
            ["namespaces", namespace, rest @ ..] if !rest.is_empty() => (Some(namespace.to_string()), rest),
            _ => (None, rest),
        };
        let (resource, named) = match rest {
            [plural] => (plural.to_string(), false),
            [plural, _name] => (plural.to_string(), true),
            [plural, _name, sub] => (format!("{plural}/{sub}"), true),
            _ => panic!("not a resource path: {}", request.path),
        };
        let verb = match (&request.method, named) {
            (&Method::GET, true) => "get",
            (&Method::GET, false) if request.is_watch() => "watch",
            (&Method::GET, false) => "list",
            (&Method::POST, _) => "create",
            (&Method::PUT, _) => "update",
            (&Method::PATCH, _) => "patch",
            (&Method::DELETE, _) => "delete",
            (method, _) => panic!("unexpected method {method}"),
        };
        Access {
            group: group.to_string(),
            resource,
            verb,
            namespace,
        }
    }
}

impl Rule {
    fn allows(&self, access: &Access) -> bool {
        self.api_groups.contains(&access.group)
            && self.resources.contains(&access.resource)
            && self.verbs.iter().any(|v| v == access.verb)
    }
}

#[tokio::test]
async fn every_request_shunt_run_makes_is_allowed_by_the_chart_rbac_rules() {
    let rules: Rules = serde_saphyr::from_str(RULES).expect("rbac-rules.yaml parses");
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let mut service = super::mk_service(RELEASE_NAMESPACE, "shunt");
    service["spec"]["clusterIPs"] = json!(["10.96.0.20"]);
    api.apply(service);
    // The longest name an Ingress may have: its Event must still be created (named by the server).
    api.apply(mk_ingress(
        "shop",
        &LONGEST_NAME.join("."),
        OURS,
        &host("broken"),
        "missing",
    ));
    // `--node-name` without `--zone`: shunt reads its Node's zone label (the chart's `get` on nodes).
    api.apply(json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"topology.kubernetes.io/zone": "zone-a"}},
    }));
    let _shunt = cluster
        .shunt(
            "shunt-0",
            &["--publish-service", "shunt-system/shunt", "--node-name", "node-a"],
        )
        .await;

    // Wait until it has done each thing the rules grant once (or time out and show what not).
    // The Gateway API rules are used against a real API server with the CRDs (real/gateway.rs).
    let all: Vec<&Rule> = rules.cluster.iter().chain(&rules.namespace).collect();
    let _ = poll_until(RENEWAL, async || unused(&all, &api.requests()).is_empty().then_some(())).await;
    let requests = api.requests();
    let unused = unused(&all, &requests);
    assert!(unused.is_empty(), "granted but never used by shunt run: {unused:?}");
    assert_all_allowed(&rules, &requests);
}

#[tokio::test]
async fn managing_coredns_needs_only_get_and_update_of_its_one_configmap() {
    let rules: Rules = serde_saphyr::from_str(RULES).expect("rbac-rules.yaml parses");
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let corefile = ".:53 {\n    errors\n}\n";
    api.apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "kube-system", "name": "coredns"}, "data": {"Corefile": corefile}}));
    let args = ["--publish-service", "shunt-system/shunt", "--manage-coredns"];
    let _shunt = cluster.shunt("shunt-0", &args).await;
    let coredns: Vec<&Rule> = rules.coredns.iter().collect();
    let _ = poll_until(RENEWAL, async || {
        unused(&coredns, &api.requests()).is_empty().then_some(())
    })
    .await;
    let requests = api.requests();
    let unused = unused(&coredns, &requests);
    assert!(
        unused.is_empty(),
        "granted but never used by shunt run --manage-coredns: {unused:?}"
    );
    assert_all_allowed(&rules, &requests);
}

/// The (group, resource, verb) grants of `rules` that no successful request used.
fn unused(rules: &[&Rule], requests: &[Recorded]) -> Vec<(String, String, String)> {
    let used: Vec<Access> = requests.iter().filter(|r| r.ok()).map(Access::of).collect();
    let grants = rules.iter().flat_map(|rule| {
        rule.api_groups.iter().flat_map(move |group| {
            rule.resources.iter().flat_map(move |resource| {
                rule.verbs
                    .iter()
                    .map(move |verb| (group.clone(), resource.clone(), verb.clone()))
            })
        })
    });
    grants
        .filter(|(group, resource, verb)| {
            !used
                .iter()
                .any(|a| a.group == *group && a.resource == *resource && a.verb == verb.as_str())
        })
        .collect()
}

/// Every request passes the cluster rules, the release-namespace rules, or (for the CoreDNS
/// ConfigMap, by name) the coredns rules.
fn assert_all_allowed(rules: &Rules, requests: &[Recorded]) {
    let refused: Vec<String> = requests
        .iter()
        .map(|request| (request, Access::of(request)))
        .filter(|(request, access)| {
            let cluster_wide = rules
                .cluster
                .iter()
                .chain(&rules.gateway_api)
                .any(|rule| rule.allows(access));
            let in_release = access.namespace.as_deref() == Some(RELEASE_NAMESPACE)
                && rules.namespace.iter().any(|rule| rule.allows(access));
            // The chart grants the same rules on node-local-dns's ConfigMap, by name.
            let configmaps =
                ["coredns", "node-local-dns"].map(|name| format!("/api/v1/namespaces/kube-system/configmaps/{name}"));
            let coredns = configmaps.contains(&request.path) && rules.coredns.iter().any(|rule| rule.allows(access));
            let coredns_deployment = request.path == "/apis/apps/v1/namespaces/kube-system/deployments/coredns"
                && rules.coredns_deployment.iter().any(|rule| rule.allows(access));
            !cluster_wide && !in_release && !coredns && !coredns_deployment
        })
        .map(|(request, access)| format!("{} {}?{} ({access:?})", request.method, request.path, request.query))
        .collect();
    assert!(refused.is_empty(), "RBAC would refuse:\n{}", refused.join("\n"));
}
