"""Renders the chart offline with Helm v4 (helm-python-sdk) and indexes what comes out.

    values ─▶ Chart.render (the engine `helm template` uses) ─▶ YAML documents ─▶ Rendered
"""

from __future__ import annotations

import functools
import json
import pathlib
from dataclasses import dataclass
from typing import Any

import helm_python as helm
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "shunt"
RULES_FILE = CHART / "files" / "rbac-rules.yaml"
# Not "shunt": names must come from the fullname helper, not be spelt out in templates.
RELEASE = "edge"
NAMESPACE = "shunt-system"

# Value sets every test module can refer to by name; each is linted and schema-checked.
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "daemonset": {"kind": "DaemonSet"},
    "namespaced": {"watchNamespaces": ["a", "b"]},
    "coredns-corefile": {"coredns": {"manage": True}},
    "coredns-custom": {"coredns": {"manage": True, "target": "custom", "exclude": ["*.internal.example.com"]}},
    "coredns-shared": {"coredns": {"manage": True, "domains": ["example.com", "apps.example.org"], "version": "1.11.1"}},
    "autoscaled": {"autoscaling": {"enabled": True, "targetMemoryUtilizationPercentage": 80}},
    "servicemonitor": {"metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}}}},
    "networkpolicy": {
        "networkPolicy": {
            "enabled": True,
            "admin": {"namespaces": ["monitoring"], "podLabels": {"app.kubernetes.io/name": "prometheus"}, "extraFrom": []},
        }
    },
    # Leaving TKE's Nginx Ingress add-on: its class becomes ours, its ConfigMap is in kube-system.
    "class-profile": {
        "ingressClass": {"name": "internal"},
        "classProfiles": ["internal=nginx"],
        "nginxConfigMap": {"namespace": "kube-system", "name": "tke-nginx"},
    },
    "everything": {
        "kind": "DaemonSet",
        "watchNamespaces": ["shop", NAMESPACE],
        "coredns": {"manage": True, "target": "custom", "configMap": {"namespace": "dns", "name": "my-custom"}},
        "ingressClass": {"name": "internal", "default": True, "controller": "example.com/internal"},
        # No qcloud shadow class: with watchIngressWithoutClass it would claim class-less Ingresses too.
        "shadowClasses": ["alb", "nginx"],
        "classProfiles": ["internal=nginx", "legacy=qcloud"],
        "watchIngressWithoutClass": True,
        "publishHostname": True,
        "trustedProxies": ["10.0.0.0/8", "192.168.1.1"],
        "defaultSslCertificate": "shop/wildcard-tls",
        "logFormat": "json",
        "preStopSeconds": 10,
        "drainTimeoutSeconds": 60,
        "metrics": {"serviceMonitor": {"enabled": True}},
        "networkPolicy": {
            "enabled": True,
            "admin": {
                "namespaces": ["monitoring", "ops"],
                "podLabels": {"team": "sre"},
                "extraFrom": [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
            },
        },
        "serviceAccount": {"name": "gateway", "annotations": {"example.com/role": "edge"}},
        "image": {"repository": "registry.example.com/shunt", "tag": "dev", "pullPolicy": "Always"},
        "imagePullSecrets": [{"name": "registry"}],
        "tolerations": [{"operator": "Exists"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "priorityClassName": "system-cluster-critical",
        "podAnnotations": {"example.com/scrape": "yes"},
        "podLabels": {"team": "edge"},
        "extraArgs": ["--upstream-timeout", "120s"],
        "extraEnv": [{"name": "RUST_LOG", "value": "shunt=debug"}],
    },
}


@functools.cache
def chart() -> helm.Chart:
    return helm.Chart.load(CHART)


@functools.cache
def rules() -> dict[str, list[dict[str, Any]]]:
    """files/rbac-rules.yaml as the chart and tests/cluster/rbac.rs read it."""
    return yaml.safe_load(RULES_FILE.read_text())


@dataclass
class Rendered:
    objects: list[dict[str, Any]]
    notes: str

    def all(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind]

    def one(self, kind: str, name: str | None = None) -> dict[str, Any]:
        found = [o for o in self.all(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, f"expected one {kind} {name or ''}, got {[o['metadata']['name'] for o in found]}"
        return found[0]

    @property
    def workload(self) -> dict[str, Any]:
        found = self.all("Deployment") + self.all("DaemonSet")
        assert len(found) == 1, f"expected one workload, got {len(found)}"
        return found[0]

    @property
    def pod(self) -> dict[str, Any]:
        return self.workload["spec"]["template"]

    @property
    def container(self) -> dict[str, Any]:
        (container,) = self.pod["spec"]["containers"]
        return container

    @property
    def args(self) -> list[str]:
        return self.container["args"]

    def flag(self, name: str) -> list[str]:
        """Every value given to `--name VALUE` in the container args."""
        args = self.args
        return [args[i + 1] for i, arg in enumerate(args) if arg == name]

    @property
    def proxy_service(self) -> dict[str, Any]:
        """The Service whose port 80 reaches the container's http port: the one CoreDNS targets."""
        found = [s for s in self.all("Service") if any(p["targetPort"] == "http" for p in s["spec"]["ports"])]
        assert len(found) == 1, f"expected one proxy Service, got {len(found)}"
        return found[0]


def render(values: dict[str, Any] | str | None = None, *, namespace: str = NAMESPACE) -> Rendered:
    """Renders VARIANTS[values] when given a name, else the values as given."""
    if isinstance(values, str):
        values = VARIANTS[values]
    return _render(json.dumps(values or {}, sort_keys=True), namespace)


@functools.cache
def _render(values_json: str, namespace: str) -> Rendered:
    manifests = chart().render(json.loads(values_json), name=RELEASE, namespace=namespace, is_install=True)
    objects, notes = [], ""
    for path, text in sorted(manifests.items()):
        if path.endswith("NOTES.txt"):
            notes = text
            continue
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return Rendered(objects, notes)


def selector_matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())
