"""`helm lint` and values.schema.json: every variant is clean, typos and bad enums are refused."""

import helm_python as helm
import pytest

from support import CHART, NAMESPACE, VARIANTS, chart, render


@pytest.mark.parametrize("strict", [False, True], ids=["lint", "lint-strict"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_helm_lint_reports_nothing_above_info(variant, strict):
    report = helm.lint(CHART, VARIANTS[variant], strict=strict, namespace=NAMESPACE)
    # Severity 1 is INFO ("icon is recommended"); 2 is WARNING, which --strict turns into a failure.
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert problems == [] and report["errors"] == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_satisfies_the_values_schema(variant):
    chart().validate_schema(VARIANTS[variant])


@pytest.mark.parametrize(
    "values, offender",
    [
        ({"replica": 3}, "replica"),
        ({"coredns": {"mange": True}}, "mange"),
        ({"ingressClass": {"defualt": True}}, "defualt"),
        ({"metrics": {"serviceMonitor": {"enable": True}}}, "enable"),
        ({"resources": {"limit": {"memory": "1Gi"}}}, "limit"),
        ({"podDisruptionBudget": {"maxUnavailble": 1}}, "maxUnavailble"),
    ],
)
def test_the_values_schema_refuses_a_misspelt_key(values, offender):
    with pytest.raises(helm.HelmValuesError, match=offender):
        chart().validate_schema(values)


@pytest.mark.parametrize(
    "values, path",
    [
        ({"kind": "Daemonset"}, "/kind"),
        ({"kind": "StatefulSet"}, "/kind"),
        ({"coredns": {"target": "configmap"}}, "/coredns/target"),
        ({"logFormat": "logfmt"}, "/logFormat"),
        ({"replicas": "2"}, "/replicas"),
        ({"watchNamespaces": "shop"}, "/watchNamespaces"),
        ({"defaultSslCertificate": "wildcard-tls"}, "/defaultSslCertificate"),
        ({"coredns": {"domains": ["*.example.com"]}}, "/coredns/domains/0"),
        ({"coredns": {"domains": ["Example.com"]}}, "/coredns/domains/0"),
        ({"coredns": {"version": "latest"}}, "/coredns/version"),
        ({"classProfiles": ["internal=nginz"]}, "/classProfiles/0"),
        ({"classProfiles": ["internal"]}, "/classProfiles/0"),
        ({"classProfiles": ["internal=ingress-nginx"]}, "/classProfiles/0"),
    ],
)
def test_the_values_schema_refuses_a_bad_value(values, path):
    with pytest.raises(helm.HelmValuesError, match=path):
        chart().validate_schema(values)


def test_rendering_refuses_values_the_schema_refuses():
    with pytest.raises(helm.HelmValuesError, match="/kind"):
        render({"kind": "Daemonset"})
