"""The Helm chart deploy/helm/trainvitals, with the real Helm (v4, built from its
Go module by scripts/helm.sh into build/tools/bin). `helm lint` and `helm lint
--strict` pass; `helm template` with the default values and with variations
(a PodMonitor for the ServiceMonitor, no PrometheusRule, no spool, another
runtime class and image) renders manifests that decode strictly, offline, into
the Kubernetes and Prometheus Operator Go types (tests/helm: no unknown field,
a known kind, names, labels, selectors, ports and mounts that agree). The
DaemonSet runs `trainvitals serve` in the host's PID namespace with the cgroup
tree and the kubelet's pod-resources socket mounted read-only, the spool on the
node, no token, a read-only root, every capability dropped but SYS_PTRACE and
DAC_READ_SEARCH, system-node-critical, resources and probes set; nothing has a
cluster-wide role. The PrometheusRule carries deploy/prometheus/serve_rules.yml,
which promtool checks and tests from the rendered object. values.schema.json
refuses a broken values file, naming what is wrong.

The tests that need Helm are marked `helm` (make test-helm builds it: minutes
the first time). The chart's copy of the rules and its appVersion are checked
without it, by make test too, so they cannot drift unseen."""
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import ROOT
from prom_services import need

CHART = ROOT / "deploy" / "helm" / "trainvitals"
RULES = ROOT / "deploy" / "prometheus" / "serve_rules.yml"
TOOLS = ROOT / "build" / "tools" / "bin"
CAPABILITIES = {"SYS_PTRACE", "DAC_READ_SEARCH"}


def test_the_chart_carries_the_shipped_serve_rules_byte_for_byte():
    copy = CHART / "files" / "serve_rules.yml"
    assert copy.read_bytes() == RULES.read_bytes(), (
        f"{copy} differs from {RULES}: copy it over (cp {RULES.relative_to(ROOT)} "
        f"{copy.relative_to(ROOT)})")


def test_the_chart_app_version_is_the_project_version():
    project = re.search(r"project\(trainvitals VERSION (\S+)",
                        (ROOT / "CMakeLists.txt").read_text())
    assert project, "CMakeLists.txt has no project(trainvitals VERSION x)"
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2" and chart["name"] == "trainvitals", chart
    assert chart["appVersion"] == project.group(1), (
        f"Chart.yaml appVersion {chart['appVersion']} is not the project's {project.group(1)}")


@pytest.fixture(scope="session")
def tools():
    """helm and manifest-check, built by scripts/helm.sh (a no-op when they are there)."""
    made = subprocess.run([str(ROOT / "scripts" / "helm.sh")], capture_output=True, text=True,
                          timeout=1800)
    if made.returncode != 0:
        pytest.fail(f"scripts/helm.sh failed:\n{made.stdout}{made.stderr}")
    return {"helm": str(TOOLS / "helm"), "check": str(TOOLS / "manifest-check")}


def helm(tools, *args):
    return subprocess.run([tools["helm"], *args], capture_output=True, text=True, timeout=120)


def set_args(values):
    out = []
    for key, value in (values or {}).items():
        if isinstance(value, str):
            out += ["--set-string", f"{key}={value}"]
        else:
            out += ["--set", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    return out


def render(tools, values=None, release="trainvitals", namespace="monitoring", chart=CHART):
    """`helm template` of the chart, checked by manifest-check: {kind: [object, ...]}."""
    r = helm(tools, "template", release, str(chart), "--namespace", namespace, *set_args(values))
    assert r.returncode == 0, f"helm template {values} failed:\n{r.stderr}"
    checked = subprocess.run([tools["check"]], input=r.stdout, capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, (
        f"the manifests of {values} do not decode as Kubernetes objects:\n{checked.stderr}")
    objects = {}
    for doc in yaml.safe_load_all(r.stdout):
        if doc:
            objects.setdefault(doc["kind"], []).append(doc)
    said = sorted(line.split()[0] for line in checked.stdout.splitlines())
    assert said == sorted(k for k, docs in objects.items() for _ in docs), (
        f"manifest-check saw {said}, the render has {sorted(objects)}")
    return objects


def one(objects, kind):
    docs = objects.get(kind, [])
    assert len(docs) == 1, f"{len(docs)} {kind} rendered, not 1: {sorted(objects)}"
    return docs[0]


def container(objects):
    pod = one(objects, "DaemonSet")["spec"]["template"]["spec"]
    assert len(pod["containers"]) == 1, pod["containers"]
    return pod, pod["containers"][0]


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.mark.helm
def test_helm_lint_passes_also_strict(tools):
    for strict in ([], ["--strict"]):
        r = helm(tools, "lint", *strict, str(CHART))
        assert r.returncode == 0 and "0 chart(s) failed" in r.stdout, (
            f"helm lint {strict}:\n{r.stdout}{r.stderr}")
        assert "[WARNING]" not in r.stdout and "[ERROR]" not in r.stdout, r.stdout
    variation = ["--set", "podMonitor.enabled=true", "--set", "serviceMonitor.enabled=false",
                 "--set", "spool.enabled=false", "--set-string", "runtimeClassName="]
    r = helm(tools, "lint", "--strict", str(CHART), *variation)
    assert r.returncode == 0, f"helm lint --strict {variation}:\n{r.stdout}{r.stderr}"


@pytest.mark.helm
def test_an_install_says_how_to_reach_the_agents(tools):
    r = helm(tools, "install", "trainvitals", str(CHART), "--namespace", "monitoring",
             "--dry-run=client")
    notes = r.stdout.partition("NOTES:")[2]
    assert r.returncode == 0 and notes, f"helm install --dry-run=client:\n{r.stdout}{r.stderr}"
    for said in ("port-forward daemonset/trainvitals 9402:metrics", "ServiceMonitor trainvitals",
                 "PrometheusRule trainvitals", "/var/lib/trainvitals/jobs/runs.db"):
        assert said in notes, f"the notes do not say {said!r}:\n{notes}"


@pytest.mark.helm
def test_the_default_render_is_the_agent_with_no_cluster_rights(tools):
    objects = render(tools)
    assert sorted(objects) == ["DaemonSet", "PrometheusRule", "Service", "ServiceAccount",
                               "ServiceMonitor"], sorted(objects)
    for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        assert kind not in objects, f"the chart renders a {kind}"
    for kind, docs in objects.items():
        for doc in docs:
            assert doc["metadata"]["namespace"] == "monitoring", (kind, doc["metadata"])
    account = one(objects, "ServiceAccount")
    assert account["automountServiceAccountToken"] is False, account

    ds = one(objects, "DaemonSet")
    pod, c = container(objects)
    assert pod["hostPID"] is True, "the agent needs the host's PID namespace"
    assert pod["automountServiceAccountToken"] is False, "the pod mounts a token"
    assert pod["serviceAccountName"] == account["metadata"]["name"], pod["serviceAccountName"]
    assert pod["priorityClassName"] == "system-node-critical", pod.get("priorityClassName")
    assert pod["tolerations"] == [{"operator": "Exists"}], pod.get("tolerations")
    assert pod["runtimeClassName"] == "nvidia", pod.get("runtimeClassName")
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    assert selects(ds["spec"]["selector"]["matchLabels"], pod_labels), ds["spec"]["selector"]

    assert c["image"] == "trainvitals:0.1.0", c["image"]
    assert c["command"] + c["args"] == [
        "trainvitals", "serve", "--listen", ":9402", "--node", "$(NODE_NAME)", "--spool",
        "/var/lib/trainvitals/jobs"], c["command"] + c["args"]
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}, env
    assert env["NVIDIA_VISIBLE_DEVICES"]["value"] == "all", env
    assert env["NVIDIA_DRIVER_CAPABILITIES"]["value"] == "utility", env
    assert c["ports"] == [{"name": "metrics", "containerPort": 9402, "protocol": "TCP"}], c["ports"]
    for probe in ("livenessProbe", "readinessProbe"):
        assert c[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}, c.get(probe)
    for part in ("requests", "limits"):
        assert set(c["resources"][part]) == {"cpu", "memory"}, c["resources"]

    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True, sc
    assert sc["allowPrivilegeEscalation"] is False and sc["privileged"] is False, sc
    assert sc["capabilities"]["drop"] == ["ALL"], sc["capabilities"]
    assert set(sc["capabilities"]["add"]) == CAPABILITIES, sc["capabilities"]
    assert sc["runAsUser"] == 0, "the kubelet's pod-resources socket is root's"

    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    expected = {"/sys/fs/cgroup": ("/sys/fs/cgroup", True),
                "/var/lib/kubelet/pod-resources": ("/var/lib/kubelet/pod-resources", True),
                "/var/lib/trainvitals": ("/var/lib/trainvitals", False)}
    for path, (host, read_only) in expected.items():
        assert path in mounts, f"nothing mounted at {path}: {sorted(mounts)}"
        volume = volumes[mounts[path]["name"]]
        assert volume["hostPath"]["path"] == host, volume
        assert mounts[path].get("readOnly", False) is read_only, mounts[path]
    spool = volumes[mounts["/var/lib/trainvitals"]["name"]]
    assert spool["hostPath"]["type"] == "DirectoryOrCreate", spool
    host_mounts = {p for p, m in mounts.items() if "hostPath" in volumes[m["name"]]}
    assert host_mounts == set(expected), f"hostPath mounts {sorted(host_mounts)}"
    assert not any(p == "/proc" or p.startswith("/host") for p in mounts), (
        "hostPID gives the host's /proc: no mount needed", sorted(mounts))

    service = one(objects, "Service")
    assert service["spec"]["clusterIP"] == "None", service["spec"]
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9402, "targetPort": "metrics", "protocol": "TCP"}]
    assert selects(service["spec"]["selector"], pod_labels), service["spec"]["selector"]

    monitor = one(objects, "ServiceMonitor")
    assert selects(monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"])
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["monitoring"]}
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics", endpoint
    assert endpoint["honorLabels"] is True, "a job's series keep the cluster's job label"
    assert endpoint["interval"] == "30s", endpoint


@pytest.mark.helm
def test_the_prometheus_rule_is_serve_rules_and_passes_promtool(tools, tmp_path):
    rule = one(render(tools), "PrometheusRule")
    shipped = yaml.safe_load(RULES.read_text())
    assert rule["spec"] == shipped, "the PrometheusRule is not deploy/prometheus/serve_rules.yml"
    # promtool on the groups as rendered, and the shipped unit tests against them.
    (tmp_path / "serve_rules.yml").write_text(yaml.safe_dump(rule["spec"], sort_keys=False))
    shutil.copy(RULES.parent / "serve_rules_test.yml", tmp_path)
    promtool = need("promtool")
    for args, said in ((["check", "rules", "serve_rules.yml"], "SUCCESS: 13 rules found"),
                       (["test", "rules", "serve_rules_test.yml"], "SUCCESS")):
        r = subprocess.run([promtool, *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0 and said in r.stdout, f"promtool {args}:\n{r.stdout}{r.stderr}"

    assert "PrometheusRule" not in render(tools, {"prometheusRule.enabled": False})


@pytest.mark.helm
def test_a_pod_monitor_instead_of_the_service_monitor(tools):
    objects = render(tools, {"podMonitor.enabled": True, "serviceMonitor.enabled": False,
                             "podMonitor.interval": "15s"})
    assert "ServiceMonitor" not in objects, sorted(objects)
    monitor = one(objects, "PodMonitor")
    ds = one(objects, "DaemonSet")
    _, c = container(objects)
    assert selects(monitor["spec"]["selector"]["matchLabels"],
                   ds["spec"]["template"]["metadata"]["labels"]), monitor["spec"]["selector"]
    [endpoint] = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] in {p["name"] for p in c["ports"]}, endpoint
    assert endpoint["interval"] == "15s" and endpoint["honorLabels"] is True, endpoint

    objects = render(tools, {"serviceMonitor.interval": "1m",
                             "serviceMonitor.additionalLabels.release": "kps"})
    monitor = one(objects, "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["interval"] == "1m", monitor["spec"]
    assert monitor["metadata"]["labels"]["release"] == "kps", monitor["metadata"]["labels"]


@pytest.mark.helm
def test_runtime_class_image_and_spool_are_values(tools):
    objects = render(tools, {"runtimeClassName": "nvidia-cdi",
                             "image.repository": "registry.example.org/ml/trainvitals",
                             "image.tag": "0.2.0-rc1", "image.pullPolicy": "Always",
                             "nvidia.visibleDevices": "void"},
                     release="tv", namespace="gpu-monitoring")
    pod, c = container(objects)
    assert pod["runtimeClassName"] == "nvidia-cdi", pod.get("runtimeClassName")
    assert c["image"] == "registry.example.org/ml/trainvitals:0.2.0-rc1", c["image"]
    assert c["imagePullPolicy"] == "Always", c["imagePullPolicy"]
    assert {e["name"]: e.get("value") for e in c["env"]}["NVIDIA_VISIBLE_DEVICES"] == "void"
    ds = one(objects, "DaemonSet")
    assert ds["metadata"]["name"] == "tv-trainvitals", ds["metadata"]["name"]
    assert ds["metadata"]["namespace"] == "gpu-monitoring", ds["metadata"]

    objects = render(tools, {"runtimeClassName": "", "spool.enabled": False,
                             "priorityClassName": "", "serve.port": 9500,
                             "serve.extraArgs": "{--interval,2}"})
    pod, c = container(objects)
    assert "runtimeClassName" not in pod and "priorityClassName" not in pod, pod
    assert "--spool" not in c["args"], c["args"]
    assert c["args"][:3] == ["serve", "--listen", ":9500"] and c["args"][-2:] == ["--interval", "2"]
    assert "/var/lib/trainvitals" not in {m["mountPath"] for m in c["volumeMounts"]}
    assert c["ports"][0]["containerPort"] == 9500, c["ports"]
    assert one(objects, "Service")["spec"]["ports"][0]["port"] == 9500


@pytest.mark.helm
def test_the_packaged_chart_renders_the_same(tools, tmp_path):
    r = helm(tools, "package", str(CHART), "--destination", str(tmp_path))
    assert r.returncode == 0, f"helm package:\n{r.stdout}{r.stderr}"
    [package] = tmp_path.glob("trainvitals-*.tgz")
    assert package.name == "trainvitals-0.1.0.tgz", package.name
    assert render(tools, chart=package) == render(tools)


@pytest.mark.helm
def test_the_schema_refuses_a_broken_values_file(tools, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("serve:\n  port: \"9402\"\n"
                      "serviceMonitor:\n  enabled: \"yes\"\n  intervl: 30s\n"
                      "tolerations: {operator: Exists}\n")
    wrong = ["/serve/port", "got string, want integer", "/serviceMonitor/enabled",
             "want boolean", "'intervl' not allowed", "/tolerations"]
    for args in (["lint", str(CHART), "-f", str(broken)],
                 ["template", "x", str(CHART), "-f", str(broken)]):
        r = helm(tools, *args)
        said = r.stdout + r.stderr
        assert r.returncode != 0, f"helm {args[0]} took the broken values:\n{said}"
        for what in wrong:
            assert what in said, f"helm {args[0]} does not say {what!r}:\n{said}"


@pytest.mark.helm
def test_the_checker_refuses_what_the_api_server_would(tools):
    # A field spelt in the wrong case, a kind nobody serves, a probe on a port not declared.
    base = render_text(tools)
    cases = [(base.replace("hostPID: true", "hostPid: true"),
              'unknown field "spec.template.spec.hostPid"'),
             (base.replace("kind: ServiceAccount", "kind: ServiceAcount"),
              "unknown kind v1 ServiceAcount"),
             (base.replace("port: metrics\n            initialDelaySeconds",
                           "port: metric\n            initialDelaySeconds"),
              'livenessProbe names port "metric"'),
             (base.replace("cpu: 50m", "cpu: fifty"), "quantities must match")]
    for text, said in cases:
        assert text != base, f"the case for {said!r} changed nothing"
        r = subprocess.run([tools["check"]], input=text, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 1 and said in r.stderr, f"expected {said!r}:\n{r.stderr}"


def render_text(tools):
    r = helm(tools, "template", "trainvitals", str(CHART), "--namespace", "monitoring")
    assert r.returncode == 0, r.stderr
    return r.stdout
