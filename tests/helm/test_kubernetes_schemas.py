"""Every rendered object against the Kubernetes OpenAPI schemas (kubernetes-validate, strict:
unknown fields are errors), for the oldest supported minor and two newer ones."""

import kubernetes_validate
import pytest

from support import VARIANTS, render

# 1.30 is the chart's kubeVersion floor (lifecycle.preStop.sleep).
KUBERNETES_VERSIONS = ["1.30", "1.31", "1.33"]
# CRDs kubernetes-validate has no schema for; test_workload.py checks the ServiceMonitor by hand.
CUSTOM_RESOURCES = {("monitoring.coreos.com/v1", "ServiceMonitor")}


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_rendered_object_is_valid_kubernetes(variant, version):
    for obj in render(variant).objects:
        if (obj["apiVersion"], obj["kind"]) in CUSTOM_RESOURCES:
            # Explicitly unvalidated here: if kubernetes-validate ever bundles it, this says so.
            with pytest.raises(kubernetes_validate.SchemaNotFoundError):
                kubernetes_validate.validate(obj, version, strict=True)
            continue
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(p) for p in error.path)
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']} at {path}: {error.message}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_two_objects_share_kind_namespace_and_name(variant):
    keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in render(variant).objects]
    assert len(keys) == len(set(keys)), sorted(keys)


def test_names_stay_dns_labels_with_a_63_character_fullname():
    long = "a" * 63
    rendered = render({"fullnameOverride": long, "coredns": {"manage": True}, "watchNamespaces": ["a"]})
    names = {o["metadata"]["name"] for o in rendered.objects}
    assert long in names
    for name in names:
        assert len(name) <= 63 and not name.endswith("-"), name
    assert f"{'a' * 55}-metrics" in names


def test_strict_validation_would_catch_a_misplaced_field():
    # Guards the harness itself: a field at the wrong level must fail, not pass silently.
    service = dict(render("default").proxy_service)
    service["spec"] = dict(service["spec"], internalTrafficPolicyy="Local")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(service, KUBERNETES_VERSIONS[0], strict=True)
