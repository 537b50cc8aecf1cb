"""The rendered RBAC grants exactly the rules of files/rbac-rules.yaml: nothing missing, nothing
extra, each set in the right scope, for every variant."""

from typing import Any

import pytest

from support import NAMESPACE, VARIANTS, Rendered, render, rules

# A Kubernetes fact, not a chart choice: IngressClass and Node are cluster-scoped, so no Role can
# grant them.
CLUSTER_SCOPED = {
    ("networking.k8s.io", "ingressclasses"),
    ("", "nodes"),
    ("", "namespaces"),
    ("gateway.networking.k8s.io", "gatewayclasses"),
    ("gateway.networking.k8s.io", "gatewayclasses/status"),
}
GATEWAY_API = "edge-shunt-gateway-api"

Grant = tuple[str, str, str, tuple[str, ...]]  # (apiGroup, resource, verb, resourceNames)


def grants(rule_list: list[dict[str, Any]]) -> set[Grant]:
    """Rules flattened to single permissions, so two spellings of one grant compare equal."""
    return {
        (group, resource, verb, tuple(rule.get("resourceNames", ())))
        for rule in rule_list
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def file_grants(key: str, resource_names: tuple[str, ...] = ()) -> set[Grant]:
    return {(g, r, v, resource_names) for g, r, v, _ in grants(rules()[key])}


def cluster_scoped(gs: set[Grant]) -> set[Grant]:
    return {g for g in gs if (g[0], g[1]) in CLUSTER_SCOPED}


def roles_by_namespace(rendered: Rendered) -> dict[str, dict[str, set[Grant]]]:
    """namespace -> Role name -> grants."""
    out: dict[str, dict[str, set[Grant]]] = {}
    for role in rendered.all("Role"):
        out.setdefault(role["metadata"]["namespace"], {})[role["metadata"]["name"]] = grants(role["rules"])
    return out


def named(rendered: Rendered, kind: str, name: str) -> dict[str, Any]:
    (found,) = [r for r in rendered.all(kind) if r["metadata"]["name"] == name]
    return found


def without_gateway_api(roles: dict[str, dict[str, set[Grant]]]) -> dict[str, dict[str, set[Grant]]]:
    return {ns: {name: g for name, g in by_name.items() if name != GATEWAY_API} for ns, by_name in roles.items()}


def test_the_rules_file_has_the_seven_sets_and_configmaps_and_deployments_only_for_coredns_and_nginx():
    assert set(rules()) == {
        "cluster",
        "namespace",
        "coredns",
        "corednsDeployment",
        "nginxConfigMap",
        "nginxAuthConfigMaps",
        "qcloudServiceConfigs",
        "gatewayAPI",
    }
    assert grants(rules()["qcloudServiceConfigs"]) == {
        ("cloud.tencent.com", "tkeserviceconfigs", "list", ()),
        ("cloud.tencent.com", "tkeserviceconfigs", "watch", ()),
    }
    assert grants(rules()["nginxConfigMap"]) == {("", "configmaps", "list", ()), ("", "configmaps", "watch", ())}
    assert grants(rules()["nginxAuthConfigMaps"]) == {("", "configmaps", "list", ()), ("", "configmaps", "watch", ())}
    assert grants(rules()["coredns"]) == {("", "configmaps", "get", ()), ("", "configmaps", "update", ())}
    assert grants(rules()["corednsDeployment"]) == {("apps", "deployments", "get", ())}
    for key in ("cluster", "namespace", "gatewayAPI"):
        assert all(resource not in ("configmaps", "deployments") for _, resource, _, _ in grants(rules()[key]))


def test_default_grants_the_cluster_rules_cluster_wide_and_leases_in_the_release_namespace():
    rendered = render("default")
    assert grants(named(rendered, "ClusterRole", "edge-shunt")["rules"]) == file_grants("cluster")
    assert roles_by_namespace(rendered) == {NAMESPACE: {"edge-shunt-leader": file_grants("namespace")}}


def test_gateway_api_rules_are_granted_by_default_and_not_when_disabled():
    rendered = render("default")
    assert grants(named(rendered, "ClusterRole", GATEWAY_API)["rules"]) == file_grants("gatewayAPI")
    assert "--gateway-api=false" not in rendered.args
    assert rendered.all("GatewayClass") == []
    disabled = render({"gatewayAPI": {"enabled": False}, "gatewayClass": {"create": True}})
    assert [r["metadata"]["name"] for r in disabled.all("ClusterRole")] == ["edge-shunt"]
    assert "--gateway-api=false" in disabled.args
    assert disabled.all("GatewayClass") == []


def test_gateway_api_rules_read_both_route_kinds_and_patch_their_status():
    granted = grants(named(render("default"), "ClusterRole", GATEWAY_API)["rules"])
    group = "gateway.networking.k8s.io"
    for kind in ("httproutes", "grpcroutes"):
        assert {(group, kind, "list", ()), (group, kind, "watch", ())} <= granted, kind
        assert (group, f"{kind}/status", "patch", ()) in granted, kind


def test_namespaces_are_listed_and_watched_cluster_wide_for_selector_listeners_only_with_gateway_api():
    namespaces = {("", "namespaces", "list", ()), ("", "namespaces", "watch", ())}
    for variant in ("default", "namespaced"):
        rendered = render(variant)
        assert namespaces <= grants(named(rendered, "ClusterRole", GATEWAY_API)["rules"])
        roles = roles_by_namespace(rendered)
        assert all(not namespaces & g for by_name in roles.values() for g in by_name.values())
    disabled = render({"gatewayAPI": {"enabled": False}})
    assert all(not namespaces & grants(role["rules"]) for role in disabled.all("ClusterRole"))


def test_gateway_class_create_makes_shunts_class():
    rendered = render({"gatewayClass": {"create": True, "name": "edge"}})
    (gateway_class,) = rendered.all("GatewayClass")
    assert gateway_class["metadata"]["name"] == "edge"
    assert gateway_class["spec"] == {"controllerName": "shunt.dev/gateway-controller"}


def test_watch_namespaces_grants_gateway_api_kinds_by_role_and_gateway_classes_cluster_wide():
    rendered = render("namespaced")
    cluster = cluster_scoped(file_grants("gatewayAPI"))
    assert grants(named(rendered, "ClusterRole", GATEWAY_API)["rules"]) == cluster != set()
    roles = roles_by_namespace(rendered)
    for namespace in ("a", "b", NAMESPACE):
        assert roles[namespace][GATEWAY_API] == file_grants("gatewayAPI") - cluster


def test_watch_namespaces_turns_the_cluster_rules_into_roles_plus_an_ingressclass_cluster_role():
    rendered = render("namespaced")
    cluster_role = named(rendered, "ClusterRole", "edge-shunt")
    assert grants(cluster_role["rules"]) == cluster_scoped(file_grants("cluster")) != set()

    namespaced = file_grants("cluster") - cluster_scoped(file_grants("cluster"))
    roles = without_gateway_api(roles_by_namespace(rendered))
    # The release namespace too: shunt reads its own Service there for --publish-service.
    assert set(roles) == {"a", "b", NAMESPACE}
    for namespace in ("a", "b"):
        assert roles[namespace] == {"edge-shunt": namespaced}
    assert roles[NAMESPACE] == {"edge-shunt": namespaced, "edge-shunt-leader": file_grants("namespace")}
    # Together: every cluster rule, in some scope.
    assert grants(cluster_role["rules"]) | roles["a"]["edge-shunt"] == file_grants("cluster")


@pytest.mark.parametrize(
    "values, namespace, configmap",
    [
        ({"coredns": {"manage": True}}, "kube-system", "coredns"),
        ({"coredns": {"manage": True, "target": "corefile", "configMap": {"name": "coredns-tke"}}}, "kube-system", "coredns-tke"),
        ({"coredns": {"manage": True, "target": "custom"}}, "kube-system", "coredns-custom"),
        ({"coredns": {"manage": True, "target": "custom", "configMap": {"namespace": "dns", "name": "x"}}}, "dns", "x"),
    ],
    ids=["corefile", "corefile-named", "custom", "custom-elsewhere"],
)
def test_managed_coredns_may_get_and_update_only_its_configmap(values, namespace, configmap):
    rendered = render(values)
    roles = roles_by_namespace(rendered)
    # The ConfigMap by name, and the `coredns` Deployment next to it (for its image's version).
    assert roles[namespace]["edge-shunt-coredns"] == file_grants("coredns", (configmap,)) | file_grants(
        "corednsDeployment", ("coredns",)
    )
    # The binary is told the same ConfigMap the Role names.
    assert rendered.flag("--coredns-configmap") == [f"{namespace}/{configmap}"]
    # node-local-dns's ConfigMap by name, in its own Role.
    assert roles["kube-system"]["edge-shunt-node-local-dns"] == file_grants("coredns", ("node-local-dns",))
    assert rendered.flag("--node-local-dns-configmap") == ["kube-system/node-local-dns"]


def test_node_local_dns_elsewhere_or_only_reported_is_granted_by_its_name():
    rendered = render(
        {"coredns": {"manage": True, "nodeLocalDns": {"manage": False, "configMap": {"namespace": "dns", "name": "nodelocal"}}}}
    )
    roles = roles_by_namespace(rendered)
    assert roles["dns"]["edge-shunt-node-local-dns"] == file_grants("coredns", ("nodelocal",))
    assert rendered.flag("--node-local-dns-configmap") == ["dns/nodelocal"]
    assert "--manage-node-local-dns=false" in rendered.args


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_grants_exactly_the_file_rules_and_coredns_objects_only_by_name(variant):
    rendered = render(variant)
    managed = VARIANTS[variant].get("coredns", {}).get("manage", False)
    granted: set[Grant] = set()
    for role in rendered.all("ClusterRole") + rendered.all("Role"):
        granted |= grants(role["rules"])
    for role in rendered.all("Role"):
        assert cluster_scoped(grants(role["rules"])) == set(), f"Role {role['metadata']['name']} grants a cluster-scoped resource"
    # ingress-nginx's ConfigMap, by name, when a shadow class or a class profile uses the nginx profile.
    values = VARIANTS[variant]
    nginx_name = values.get("nginxConfigMap", {}).get("name", "ingress-nginx-controller")
    nginx_config = file_grants("nginxConfigMap", (nginx_name,))
    classes = values.get("shadowClasses", []) + values.get("classProfiles", [])
    shadows_nginx = any(c == "nginx" or c.endswith("=nginx") for c in classes)
    if any(c == "qcloud" or c.endswith("=qcloud") for c in classes):
        expected_qcloud = file_grants("qcloudServiceConfigs")
    else:
        expected_qcloud = set()
    # The ConfigMaps auth-proxy-set-headers names, in the watched scope, with the nginx profile.
    nginx_auth = file_grants("nginxAuthConfigMaps") if shadows_nginx else set()
    configmaps = {g for g in granted if g[1] == "configmaps"} - nginx_config - nginx_auth
    deployments = {g for g in granted if g[1] == "deployments"}
    expected = file_grants("cluster") | file_grants("namespace") | expected_qcloud
    if values.get("gatewayAPI", {}).get("enabled", True):
        expected |= file_grants("gatewayAPI")
    if shadows_nginx:
        expected |= nginx_config | nginx_auth
    if managed:
        names = {names for _, _, _, names in configmaps}
        assert all(len(name) == 1 for name in names), "configmaps access must name each ConfigMap"
        assert ("node-local-dns",) in names and len(names) == 2, names
        for name in names:
            expected |= file_grants("coredns", name)
        assert {names for _, _, _, names in deployments} == {("coredns",)}, "deployments only by name"
        expected |= file_grants("corednsDeployment", ("coredns",))
    else:
        assert configmaps == set() and deployments == set()
    assert granted == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_binding_binds_a_rendered_role_to_the_pods_service_account(variant):
    rendered = render(variant)
    account = rendered.pod["spec"]["serviceAccountName"]
    roles = {("ClusterRole", None, r["metadata"]["name"]) for r in rendered.all("ClusterRole")}
    roles |= {("Role", r["metadata"]["namespace"], r["metadata"]["name"]) for r in rendered.all("Role")}
    bound = set()
    for binding in rendered.all("ClusterRoleBinding") + rendered.all("RoleBinding"):
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace") if ref["kind"] == "Role" else None
        assert (ref["kind"], namespace, ref["name"]) in roles, binding["metadata"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
        bound.add((ref["kind"], namespace, ref["name"]))
    assert bound == roles, "every Role is bound"
    if VARIANTS[variant].get("serviceAccount", {}).get("create", True):
        assert rendered.one("ServiceAccount")["metadata"]["name"] == account


@pytest.mark.parametrize(
    "values",
    [{"shadowClasses": ["qcloud"]}, {"shadowClasses": ["tke=qcloud"]}, {"classProfiles": ["legacy=qcloud"]}],
    ids=["shadow", "shadow-named", "class-profile"],
)
def test_the_qcloud_profile_may_list_and_watch_tkeserviceconfigs_cluster_wide(values):
    rendered = render(values)
    roles = {role["metadata"]["name"]: grants(role["rules"]) for role in rendered.all("ClusterRole")}
    assert roles["edge-shunt-qcloud"] == file_grants("qcloudServiceConfigs")
    assert "edge-shunt-qcloud" not in roles_by_namespace(rendered).get(NAMESPACE, {})


@pytest.mark.parametrize("classes", [{"shadowClasses": ["nginx"]}, {"classProfiles": ["edge=nginx"]}])
def test_the_nginx_profile_may_list_and_watch_configmaps_in_the_watched_scope(classes):
    roles = {role["metadata"]["name"]: grants(role["rules"]) for role in render(classes).all("ClusterRole")}
    assert roles["edge-shunt-nginx-auth"] == file_grants("nginxAuthConfigMaps")
    rendered = render({**classes, "watchNamespaces": ["a", "b"]})
    for namespace in ("a", "b"):
        assert roles_by_namespace(rendered)[namespace]["edge-shunt-nginx-auth"] == file_grants("nginxAuthConfigMaps")
    assert "edge-shunt-nginx-auth" not in {role["metadata"]["name"] for role in rendered.all("ClusterRole")}
    assert "edge-shunt-nginx-auth" not in {role["metadata"]["name"] for role in render({}).all("ClusterRole")}


def test_the_qcloud_profile_with_watch_namespaces_gets_a_role_in_each_watched_namespace():
    rendered = render({"shadowClasses": ["qcloud"], "watchNamespaces": ["a", "b"]})
    roles = roles_by_namespace(rendered)
    for namespace in ("a", "b"):
        assert roles[namespace]["edge-shunt-qcloud"] == file_grants("qcloudServiceConfigs")
    assert "edge-shunt-qcloud" not in {role["metadata"]["name"] for role in rendered.all("ClusterRole")}


def test_no_qcloud_profile_no_tkeserviceconfig_grant():
    rendered = render("default")
    granted = set()
    for role in rendered.all("ClusterRole") + rendered.all("Role"):
        granted |= grants(role["rules"])
    assert not any(group == "cloud.tencent.com" for group, _, _, _ in granted)
