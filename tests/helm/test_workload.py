"""The pod, its Services and the objects around them: what shunt is started with and how it is
reached, scaled, stopped and scraped."""

import pytest
import yaml

from support import CHART, NAMESPACE, VARIANTS, render, selector_matches

APP_VERSION = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]


def port_numbers(container):
    return {p["name"]: p["containerPort"] for p in container["ports"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_publish_service_names_the_rendered_proxy_service(variant):
    rendered = render(variant)
    service = rendered.proxy_service
    assert rendered.flag("--publish-service") == [f"{NAMESPACE}/{service['metadata']['name']}"]
    assert service["metadata"]["namespace"] == NAMESPACE


def test_publish_service_follows_the_release_namespace():
    rendered = render(namespace="ingress")
    assert rendered.flag("--publish-service") == ["ingress/edge-shunt"]
    assert rendered.one("Role", "edge-shunt-leader")["metadata"]["namespace"] == "ingress"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_proxy_service_maps_80_and_443_to_the_http_and_https_listeners(variant):
    rendered = render(variant)
    service = rendered.proxy_service
    ports = {p["port"]: p["targetPort"] for p in service["spec"]["ports"]}
    assert ports == {80: "http", 443: "https"}
    assert service["spec"]["type"] == "ClusterIP"
    assert selector_matches(service["spec"]["selector"], rendered.pod["metadata"]["labels"])
    assert port_numbers(rendered.container) == {"http": 8080, "https": 8443, "admin": 9090}
    assert rendered.flag("--http-addr") == ["0.0.0.0:8080"]
    assert rendered.flag("--https-addr") == ["0.0.0.0:8443"]
    assert rendered.flag("--admin-addr") == ["0.0.0.0:9090"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_metrics_are_on_their_own_service_never_on_the_proxy_service(variant):
    rendered = render(variant)
    metrics = rendered.one("Service", "edge-shunt-metrics")
    assert metrics["spec"]["ports"] == [{"name": "metrics", "port": 9090, "targetPort": "admin", "protocol": "TCP"}]
    assert selector_matches(metrics["spec"]["selector"], rendered.pod["metadata"]["labels"])
    assert "admin" not in {p["targetPort"] for p in rendered.proxy_service["spec"]["ports"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_daemonset_keeps_traffic_on_the_callers_node(variant):
    rendered = render(variant)
    daemonset = VARIANTS[variant].get("kind") == "DaemonSet"
    assert rendered.workload["kind"] == ("DaemonSet" if daemonset else "Deployment")
    policy = rendered.proxy_service["spec"]["internalTrafficPolicy"]
    assert policy == ("Local" if daemonset else "Cluster")


def test_a_daemonset_has_no_replicas_hpa_pdb_or_spread_and_surges_on_rollout():
    rendered = render({"kind": "DaemonSet", "autoscaling": {"enabled": True}, "podDisruptionBudget": {"enabled": True}})
    spec = rendered.workload["spec"]
    assert "replicas" not in spec
    assert rendered.all("HorizontalPodAutoscaler") == [] and rendered.all("PodDisruptionBudget") == []
    assert "topologySpreadConstraints" not in rendered.pod["spec"]
    # The new pod is ready beside the old one, so a Local Service never loses its node's endpoint.
    assert spec["updateStrategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}


def test_a_deployment_runs_two_replicas_spread_across_nodes_with_a_pdb():
    rendered = render("default")
    deployment = rendered.one("Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    (spread,) = rendered.pod["spec"]["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname"
    assert spread["whenUnsatisfiable"] == "ScheduleAnyway"
    assert spread["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    pdb = rendered.one("PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["selector"] == deployment["spec"]["selector"]
    assert rendered.all("HorizontalPodAutoscaler") == []


def test_spread_and_pdb_can_be_turned_off():
    rendered = render({"topologySpreadConstraints": [], "podDisruptionBudget": {"enabled": False}, "replicas": 3})
    assert "topologySpreadConstraints" not in rendered.pod["spec"]
    assert rendered.all("PodDisruptionBudget") == []
    assert rendered.workload["spec"]["replicas"] == 3


def test_autoscaling_hands_replicas_to_an_autoscaling_v2_hpa():
    rendered = render("autoscaled")
    deployment = rendered.one("Deployment")
    assert "replicas" not in deployment["spec"]
    hpa = rendered.one("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment["metadata"]["name"]}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 10)
    targets = {m["resource"]["name"]: m["resource"]["target"]["averageUtilization"] for m in hpa["spec"]["metrics"]}
    assert targets == {"cpu": 70, "memory": 80}
    assert rendered.one("PodDisruptionBudget")["spec"]["maxUnavailable"] == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_pod_runs_locked_down(variant):
    rendered = render(variant)
    pod = rendered.pod["spec"]["securityContext"]
    assert pod["runAsNonRoot"] is True
    assert pod["runAsUser"] == 65532 and pod["runAsGroup"] == 65532
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    container = rendered.container["securityContext"]
    assert container["allowPrivilegeEscalation"] is False
    assert container["readOnlyRootFilesystem"] is True
    assert container["capabilities"]["drop"] == ["ALL"]
    assert "add" not in container["capabilities"]
    assert rendered.container["resources"]["limits"]["memory"]
    assert rendered.container["resources"]["requests"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_probes_use_the_admin_port(variant):
    container = render(variant).container
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "admin"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "admin"}


@pytest.mark.parametrize("pre_stop, drain", [(None, None), (10, 60), (0, 0)])
def test_the_grace_period_outlasts_the_prestop_wait_and_the_drain(pre_stop, drain):
    values = {k: v for k, v in {"preStopSeconds": pre_stop, "drainTimeoutSeconds": drain}.items() if v is not None}
    rendered = render(values)
    pre_stop = 5 if pre_stop is None else pre_stop
    drain = 30 if drain is None else drain
    # The image is distroless: the wait is the kubelet's own sleep action, not an exec of `sleep`.
    assert rendered.container["lifecycle"] == {"preStop": {"sleep": {"seconds": pre_stop}}}
    assert rendered.flag("--drain-timeout") == [f"{drain}s"]
    assert rendered.pod["spec"]["terminationGracePeriodSeconds"] > pre_stop + drain


@pytest.mark.parametrize("variant", VARIANTS)
def test_pod_name_and_namespace_come_from_the_downward_api(variant):
    env = {e["name"]: e for e in render(variant).container["env"]}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}


def test_default_args_are_exactly_the_shunt_run_defaults_of_the_chart():
    rendered = render("default")
    assert rendered.args == [
        "run",
        "--http-addr", "0.0.0.0:8080",
        "--https-addr", "0.0.0.0:8443",
        "--admin-addr", "0.0.0.0:9090",
        "--ingress-class", "shunt",
        "--controller-name", "shunt.dev/ingress-controller",
        "--publish-service", f"{NAMESPACE}/edge-shunt",
        "--election-id", "edge-shunt-leader",
        "--drain-timeout", "30s",
        "--log-format", "text",
    ]  # fmt: skip
    assert rendered.container["image"] == f"shunt:{APP_VERSION}"


def test_every_option_reaches_the_command_line():
    rendered = render("everything")
    flag = rendered.flag
    assert flag("--ingress-class") == ["internal", "legacy"]
    assert flag("--controller-name") == ["example.com/internal"]
    assert flag("--shadow-class") == ["alb", "nginx"]
    assert flag("--class-profile") == ["internal=nginx", "legacy=qcloud"]
    assert flag("--nginx-configmap") == ["ingress-nginx/ingress-nginx-controller"]
    assert flag("--watch-namespace") == ["shop", NAMESPACE]
    assert flag("--trusted-proxies") == ["10.0.0.0/8,192.168.1.1"]
    assert flag("--default-ssl-certificate") == ["shop/wildcard-tls"]
    assert flag("--log-format") == ["json"]
    assert flag("--coredns-target") == ["custom"]
    assert flag("--coredns-configmap") == ["dns/my-custom"]
    for switch in ("--watch-ingress-without-class", "--publish-hostname", "--manage-coredns"):
        assert rendered.args.count(switch) == 1, switch
    assert rendered.args[-2:] == ["--upstream-timeout", "120s"], "extraArgs come last"
    container = rendered.container
    assert container["image"] == "registry.example.com/shunt:dev"
    assert container["imagePullPolicy"] == "Always"
    assert {"name": "RUST_LOG", "value": "shunt=debug"} in container["env"]
    spec = rendered.pod["spec"]
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    assert spec["serviceAccountName"] == "gateway"
    assert spec["priorityClassName"] == "system-cluster-critical"
    assert spec["tolerations"] == [{"operator": "Exists"}]
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert rendered.pod["metadata"]["annotations"] == {"example.com/scrape": "yes"}
    assert rendered.pod["metadata"]["labels"]["team"] == "edge"
    assert rendered.one("ServiceAccount", "gateway")["metadata"]["annotations"] == {"example.com/role": "edge"}


def test_managed_coredns_flags_appear_only_when_managed():
    assert not [a for a in render("default").args if "coredns" in a or a.startswith("--dns-")]
    rendered = render("coredns-custom")
    assert rendered.flag("--coredns-target") == ["custom"]
    assert rendered.flag("--coredns-configmap") == ["kube-system/coredns-custom"]
    assert rendered.flag("--dns-exclude") == ["*.internal.example.com"]
    corefile = render("coredns-corefile")
    assert corefile.flag("--coredns-target") == ["corefile"]
    assert corefile.flag("--coredns-configmap") == ["kube-system/coredns"]
    assert corefile.flag("--dns-domain") == [] and corefile.flag("--coredns-version") == []


def test_shared_cluster_values_reach_the_command_line_only_when_managed():
    shared = render("coredns-shared")
    assert shared.flag("--dns-domain") == ["example.com", "apps.example.org"]
    assert shared.flag("--coredns-version") == ["1.11.1"]
    unmanaged = render({"coredns": {"manage": False, "domains": ["example.com"], "version": "1.11.1"}})
    assert not [a for a in unmanaged.args if "dns-domain" in a or "coredns" in a]


def test_shadow_certificates_and_rewrite_mode_become_flags():
    default = render("default")
    assert default.flag("--shadow-tls") == []
    assert default.flag("--shadow-rewrite") == []
    rendered = render(
        {
            "shadowClasses": ["qcloud"],
            "shadowTls": {"shop.example.com": "shop/shop-tls", "*.apps.example.com": "certs/apps"},
            "coredns": {"manage": True, "shadowRewrite": "all"},
        }
    )
    assert sorted(rendered.flag("--shadow-tls")) == ["*.apps.example.com=certs/apps", "shop.example.com=shop/shop-tls"]
    assert rendered.flag("--shadow-rewrite") == ["all"]


def test_the_ingressclass_matches_the_flags_and_is_default_only_when_asked():
    rendered = render("default")
    ingress_class = rendered.one("IngressClass")
    assert ingress_class["metadata"]["name"] == rendered.flag("--ingress-class")[0] == "shunt"
    assert ingress_class["spec"] == {"controller": rendered.flag("--controller-name")[0]}
    assert "annotations" not in ingress_class["metadata"]

    default = render({"ingressClass": {"default": True}}).one("IngressClass")
    assert default["metadata"]["annotations"] == {"ingressclass.kubernetes.io/is-default-class": "true"}

    skipped = render({"ingressClass": {"create": False, "name": "existing"}})
    assert skipped.all("IngressClass") == []
    assert skipped.flag("--ingress-class") == ["existing"]


def test_the_servicemonitor_scrapes_the_metrics_service_only():
    # ServiceMonitor is a CRD, so kubernetes-validate has no schema for it (see
    # test_kubernetes_schemas.py): its shape is checked here instead.
    rendered = render("servicemonitor")
    monitor = rendered.one("ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s"}]
    selector = monitor["spec"]["selector"]["matchLabels"]
    selected = [s["metadata"]["name"] for s in rendered.all("Service") if selector_matches(selector, s["metadata"]["labels"])]
    assert selected == ["edge-shunt-metrics"]
    assert render("default").all("ServiceMonitor") == []


def test_notes_show_how_to_verify_how_to_get_the_coredns_stanza_and_how_to_check_dns():
    notes = render("default").notes
    assert f"rollout status deployment/edge-shunt" in notes
    assert f"http://edge-shunt.{NAMESPACE}.svc.cluster.local/" in notes
    assert f"exec deployment/edge-shunt -- shunt dns" in notes
    # `shunt dns` is a separate process: it must be told what `shunt run` was.
    assert f"--publish-service {NAMESPACE}/edge-shunt --ingress-class shunt" in notes
    assert "port-forward svc/edge-shunt-metrics 9090" in notes

    assert f"# BEGIN shunt {NAMESPACE}/edge-shunt" in notes
    load_balancers = render({"coredns": {"manage": True, "loadBalancerServices": True}})
    assert "--dns-loadbalancer-services" in load_balancers.args
    assert "dns check \\\n    --publish-service" in load_balancers.notes and "--dns-loadbalancer-services" in load_balancers.notes
    assert "--dns-loadbalancer-services" not in render("default").args
    assert "--dns-domain example.com --dns-domain apps.example.org" in render(
        {"coredns": {"domains": ["example.com", "apps.example.org"]}}
    ).notes
    assert "shunt dns --node-local-dns" in notes and "# BEGIN shunt-view" in notes
    managed = render("coredns-custom").notes
    assert "shunt dns --" not in managed, "no stanza to paste when shunt manages it"
    # Both modes show the check from where callers stand.
    for rendered in (notes, managed):
        assert f"exec deployment/edge-shunt -- shunt dns check \\\n    --publish-service {NAMESPACE}/edge-shunt" in rendered
    assert "node-local-dns (kube-system/node-local-dns), when it exists, gets a block" in managed
    assert "reason=DnsRewriteRefused" in managed
    assert "get configmap coredns-custom" in managed
    assert "rollout status daemonset/edge-shunt" in render("daemonset").notes


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_node_name_comes_from_the_downward_api(variant):
    env = {e["name"]: e for e in render(variant).container["env"]}
    assert env["SHUNT_NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"


def test_traffic_distribution_is_set_on_the_proxy_service_only_when_asked():
    assert "trafficDistribution" not in render().proxy_service["spec"]
    rendered = render({"service": {"trafficDistribution": "PreferSameZone"}})
    assert rendered.proxy_service["spec"]["trafficDistribution"] == "PreferSameZone"
    assert rendered.proxy_service["spec"]["internalTrafficPolicy"] == "Cluster"


def test_extra_gateway_ports_are_listened_on_and_published():
    rendered = render({"gatewayAPI": {"ports": [{"port": 8080, "containerPort": 18080}]}})
    assert rendered.flag("--gateway-port") == ["8080=0.0.0.0:18080"]
    assert port_numbers(rendered.container)["gw-8080"] == 18080
    ports = {p["port"]: p["targetPort"] for p in rendered.proxy_service["spec"]["ports"]}
    assert ports == {80: "http", 443: "https", 8080: "gw-8080"}
    off = render({"gatewayAPI": {"enabled": False, "ports": [{"port": 8080, "containerPort": 18080}]}})
    assert off.flag("--gateway-port") == []
    assert "gw-8080" not in port_numbers(off.container)
