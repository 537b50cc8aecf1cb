"""classProfiles: classes shunt owns, compiled with a profile. The class becomes ours, the nginx
profile brings its one ConfigMap (flag and grant), and the `shunt dns` commands in NOTES are told
all of it."""

import pytest

from support import NAMESPACE, render
from test_rbac import file_grants, roles_by_namespace

TKE = {"namespace": "kube-system", "name": "tke-nginx"}


def configmap_grants(rendered):
    """namespace -> Role name -> its configmaps grants, for every Role granting any."""
    found = {}
    for namespace, roles in roles_by_namespace(rendered).items():
        for name, granted in roles.items():
            configmaps = {g for g in granted if g[1] == "configmaps"}
            if configmaps:
                found.setdefault(namespace, {})[name] = configmaps
    return found


def dns_command_lines(notes):
    """The argument lines of the printed `shunt dns` and `shunt dns check` commands."""
    lines = notes.splitlines()
    found = [lines[i + 1].strip() for i, line in enumerate(lines) if "-- shunt dns" in line]
    assert found, "NOTES print no `shunt dns` command"
    return found


def test_a_class_profile_becomes_its_flag_and_makes_its_class_ours():
    rendered = render({"classProfiles": ["nginx=nginx", "shunt=qcloud"]})
    assert rendered.flag("--class-profile") == ["nginx=nginx", "shunt=qcloud"]
    # A profile applies only to a class of ours: the chart's class first, once.
    assert rendered.flag("--ingress-class") == ["shunt", "nginx"]
    assert rendered.flag("--shadow-class") == []
    assert rendered.notes.startswith('\nshunt serves Ingresses of class "shunt", "nginx" in all namespaces.')


def test_an_nginx_class_profile_grants_exactly_the_named_configmap_and_passes_it():
    rendered = render("class-profile")
    assert rendered.flag("--class-profile") == ["internal=nginx"]
    assert rendered.flag("--ingress-class") == ["internal"]
    assert rendered.flag("--nginx-configmap") == ["kube-system/tke-nginx"]
    expected = file_grants("nginxConfigMap", ("tke-nginx",))
    assert configmap_grants(rendered) == {"kube-system": {"edge-shunt-nginx-config": expected}}
    binding = rendered.one("RoleBinding", "edge-shunt-nginx-config")
    assert binding["metadata"]["namespace"] == "kube-system"
    assert binding["roleRef"]["name"] == "edge-shunt-nginx-config"


def test_the_default_nginx_configmap_is_granted_when_none_is_named():
    rendered = render({"classProfiles": ["internal=nginx"]})
    assert rendered.flag("--nginx-configmap") == ["ingress-nginx/ingress-nginx-controller"]
    expected = file_grants("nginxConfigMap", ("ingress-nginx-controller",))
    assert configmap_grants(rendered) == {"ingress-nginx": {"edge-shunt-nginx-config": expected}}


def test_the_nginx_default_backend_is_passed_only_when_set_and_the_nginx_profile_is_served():
    assert render({"classProfiles": ["internal=nginx"]}).flag("--nginx-default-backend") == []
    backend = {"classProfiles": ["internal=nginx"], "nginxDefaultBackend": "errors/pages"}
    assert render(backend).flag("--nginx-default-backend") == ["errors/pages"]
    qcloud = {"classProfiles": ["internal=qcloud"], "nginxDefaultBackend": "errors/pages"}
    assert render(qcloud).flag("--nginx-default-backend") == []


def test_a_qcloud_class_profile_reads_no_nginx_configmap():
    rendered = render({"classProfiles": ["internal=qcloud"], "nginxConfigMap": TKE})
    assert rendered.flag("--class-profile") == ["internal=qcloud"]
    assert rendered.flag("--nginx-configmap") == []
    assert configmap_grants(rendered) == {}
    for line in dns_command_lines(rendered.notes):
        assert "--class-profile internal=qcloud" in line and "--nginx-configmap" not in line


def test_notes_give_shunt_dns_the_class_profiles_and_the_nginx_configmap():
    for line in dns_command_lines(render("class-profile").notes):
        assert line == (
            f"--publish-service {NAMESPACE}/edge-shunt --ingress-class internal"
            " --controller-name shunt.dev/ingress-controller"
            " --class-profile internal=nginx --nginx-configmap kube-system/tke-nginx"
        )


@pytest.mark.parametrize("managed", [False, True], ids=["pasted", "managed"])
def test_notes_name_the_nginx_configmap_of_a_shadowed_nginx_class_too(managed):
    # TKE's Nginx Ingress add-on: ingress-nginx's ConfigMap is not where the flag's default says.
    values = {"shadowClasses": ["tke=nginx"], "nginxConfigMap": TKE, "coredns": {"manage": managed}}
    lines = dns_command_lines(render(values).notes)
    assert len(lines) == (1 if managed else 2)
    for line in lines:
        assert "--shadow-class tke=nginx --nginx-configmap kube-system/tke-nginx" in line
    for line in dns_command_lines(render({"shadowClasses": ["qcloud"], "nginxConfigMap": TKE}).notes):
        assert "--nginx-configmap" not in line


@pytest.mark.parametrize("shadow", ["qcloud", "tke=qcloud"])
def test_a_qcloud_shadow_class_and_class_less_ingresses_cannot_both_be_claimed(shadow):
    with pytest.raises(Exception, match="watchIngressWithoutClass and shadowClasses"):
        render({"watchIngressWithoutClass": True, "shadowClasses": [shadow]})
    assert render({"watchIngressWithoutClass": True, "shadowClasses": ["nginx"]}).flag("--shadow-class") == ["nginx"]


def test_shadow_gateway_classes_become_flags_and_add_no_rbac():
    plain = render({})
    rendered = render({"shadowGatewayClasses": ["istio", "eg.example"]})
    assert rendered.flag("--shadow-gateway-class") == ["istio", "eg.example"]
    assert plain.flag("--shadow-gateway-class") == []
    # Read-only: the same roles and rules as without them (status verbs stay the owned class's).
    for kind in ("ClusterRole", "Role"):
        assert [r["rules"] for r in rendered.all(kind)] == [r["rules"] for r in plain.all(kind)]


def test_shadow_gateway_classes_need_the_gateway_api_and_a_class_name():
    with pytest.raises(Exception, match="shadowGatewayClasses needs gatewayAPI.enabled"):
        render({"shadowGatewayClasses": ["istio"], "gatewayAPI": {"enabled": False}})
    with pytest.raises(Exception):
        render({"shadowGatewayClasses": ["Not A Class"]})
