"""The optional NetworkPolicy: off by default; when on, it selects shunt's pods, leaves the proxy
ports open to every client and opens the admin port (metrics, /routes with pod IPs) only to the
peers the values list. kubernetes-validate checks the objects (test_kubernetes_schemas.py runs
every variant, "networkpolicy" and "everything" included)."""

from typing import Any

import pytest

from support import NAMESPACE, Rendered, render, selector_matches

PROXY_PORTS = {"http", "https"}


def policy_values(**admin: Any) -> dict[str, Any]:
    return {"networkPolicy": {"enabled": True, "admin": {"namespaces": [], "podLabels": {}, "extraFrom": [], **admin}}}


def named_ports(rule: dict[str, Any]) -> set[str]:
    return {port["port"] for port in rule.get("ports", [])}


def admin_rules(policy: dict[str, Any]) -> list[dict[str, Any]]:
    return [rule for rule in policy["spec"]["ingress"] if "admin" in named_ports(rule)]


def test_there_is_no_network_policy_by_default():
    assert render("default").all("NetworkPolicy") == []


def test_the_policy_selects_exactly_the_workloads_pods_and_isolates_their_ingress():
    rendered = render("networkpolicy")
    policy = rendered.one("NetworkPolicy")
    assert policy["metadata"]["namespace"] == NAMESPACE
    selector = policy["spec"]["podSelector"]["matchLabels"]
    assert selector_matches(selector, rendered.pod["metadata"]["labels"])
    assert selector == rendered.workload["spec"]["selector"]["matchLabels"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]


@pytest.mark.parametrize("variant", ["networkpolicy", "everything"])
def test_the_proxy_ports_stay_open_to_everyone_and_the_admin_port_does_not(variant):
    rendered = render(variant)
    policy = rendered.one("NetworkPolicy")
    open_rules = [rule for rule in policy["spec"]["ingress"] if "from" not in rule]
    assert [named_ports(rule) for rule in open_rules] == [PROXY_PORTS]
    for rule in policy["spec"]["ingress"]:
        assert rule.get("ports"), "a rule without ports would open every port"
    # The names are the container's ports, and "admin" is the one --admin-addr listens on.
    ports = {port["name"]: port["containerPort"] for port in rendered.container["ports"]}
    assert PROXY_PORTS | {"admin"} <= set(ports)
    admin_addr = rendered.flag("--admin-addr")
    assert admin_addr == [f"0.0.0.0:{ports['admin']}"]


@pytest.mark.parametrize(
    "admin, peers",
    [
        (
            {"namespaces": ["monitoring"], "podLabels": {"app": "prometheus"}},
            [
                {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                    "podSelector": {"matchLabels": {"app": "prometheus"}},
                }
            ],
        ),
        (
            {"namespaces": ["monitoring", "ops"]},
            [
                {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}},
                {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ops"}}},
            ],
        ),
        ({"podLabels": {"app": "prometheus"}}, [{"podSelector": {"matchLabels": {"app": "prometheus"}}}]),
        (
            {"extraFrom": [{"ipBlock": {"cidr": "10.0.0.0/8"}}], "namespaces": ["ops"]},
            [
                {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ops"}}},
                {"ipBlock": {"cidr": "10.0.0.0/8"}},
            ],
        ),
    ],
    ids=["namespace-and-labels", "namespaces", "labels-in-release-namespace", "extra-peers"],
)
def test_the_admin_port_opens_only_to_the_listed_peers(admin, peers):
    policy = render(policy_values(**admin)).one("NetworkPolicy")
    (rule,) = admin_rules(policy)
    assert named_ports(rule) == {"admin"}
    assert rule["from"] == peers


def test_with_no_peers_listed_only_the_node_reaches_the_admin_port():
    policy = render(policy_values()).one("NetworkPolicy")
    assert admin_rules(policy) == []
    assert [named_ports(rule) for rule in policy["spec"]["ingress"]] == [PROXY_PORTS]


def test_the_schema_refuses_a_misspelt_key():
    with pytest.raises(Exception, match="(?i)additional|adminn|schema"):
        render({"networkPolicy": {"enabled": True, "adminn": {}}})


def test_rendered_with_the_defaults_of_values_yaml_it_needs_only_enabled():
    rendered: Rendered = render({"networkPolicy": {"enabled": True}})
    policy = rendered.one("NetworkPolicy")
    assert admin_rules(policy) == []
