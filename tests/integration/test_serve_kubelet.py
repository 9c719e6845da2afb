"""`serve` names each Kubernetes job (a pod, known by the UID in its cgroup
path) with its namespace, pod and container as the kubelet's pod-resources API
lists them, asked over gRPC on the kubelet's Unix socket (a real grpcio server
here, kubelet_server.py). That API gives no UIDs: a job is the container that
was given the GPUs it uses or was given; where a GPU is shared by
time-slicing, the pod's name (its host name) tells the sharers apart. A
kubelet that cannot be asked costs the names, said once, and nothing else."""
import json
import os
import subprocess
import uuid

import pytest

from conftest import helper
from kubelet_server import Kubelet
from prom_services import wait_for
from test_serve import (Agent, hierarchies, info_of, need_cgroups, placed, ready_processes,
                        remove_tree)

POD_X, POD_Y, POD_Z = (str(uuid.uuid4()) for _ in range(3))
CID_X, CID_Y, CID_Z = (uuid.uuid4().hex * 2 for _ in range(3))
GPUS = [f"GPU-{uuid.uuid4()}" for _ in range(3)]


def systemd_slice(qos, pod):
    return (f"/kubepods.slice/kubepods-{qos}.slice/kubepods-{qos}-pod{pod.replace('-', '_')}"
            f".slice")


@pytest.fixture(scope="module")
def pods():
    roots = need_cgroups()
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "CUDA_", "NVIDIA_", "POD_"))}
    jobs = {
        # Guaranteed, cgroupfs driver; on the host's network: its host name is the node's.
        "x": (f"/kubepods/pod{POD_X}/{CID_X}", {"HOSTNAME": "node-7"}),
        # Burstable, systemd driver; given a GPU it has not opened yet.
        "y": (f"{systemd_slice('burstable', POD_Y)}/cri-containerd-{CID_Y}.scope",
              {"HOSTNAME": "llm-1", "NVIDIA_VISIBLE_DEVICES": GPUS[1]}),
        # Best effort, systemd driver; a replica of a time-sliced GPU.
        "z": (f"{systemd_slice('besteffort', POD_Z)}/cri-containerd-{CID_Z}.scope",
              {"HOSTNAME": "notebook-z"}),
    }
    def start(procs):
        for name, (path, env) in jobs.items():
            procs[name] = subprocess.Popen(
                [*helper("in_cgroup.py"), *placed({"unified": path, "v1": path}), "--",
                 *helper("job_work.py"), "20", "0.05"],
                env={**base, **env}, stdout=subprocess.PIPE, text=True)

    with ready_processes(start, roots, ("kubepods", "kubepods.slice")) as pids:
        yield pids


@pytest.fixture
def gpus(tmp_path, pods):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"devices": [
        {"uuid": GPUS[0], "series": {"util_gpu": 80},
         "processes": [{"pid": pods["x"], "memory_bytes": 2e9, "sm_util": 80}]},
        {"uuid": GPUS[1], "series": {"util_gpu": 0}, "processes": []},
        {"uuid": GPUS[2], "series": {"util_gpu": 30},
         "processes": [{"pid": pods["z"], "memory_bytes": 1e9, "sm_util": 30}]},
    ]}))
    return path


# What the kubelet lists: more pods than run here, a sidecar, and the two
# sharers of a time-sliced GPU.
LISTED = [
    ("vision", "trainer-x", [("trainer", {"nvidia.com/gpu": [GPUS[0]]})]),
    ("nlp", "llm-1", [("worker", {"nvidia.com/gpu": [GPUS[1]]}), ("log-shipper", {})]),
    ("research", "notebook-w", [("jupyter", {"nvidia.com/gpu": [f"{GPUS[2]}::0"]})]),
    ("research", "notebook-z", [("jupyter", {"nvidia.com/gpu": [f"{GPUS[2]}::1"]})]),
    ("kube-system", "coredns-5d78c9869d-abcde", [("coredns", {})]),
]


def named(agent, *jobs):
    def ready():
        s = agent.series()
        infos = [info_of(agent, s, j) for j in jobs]
        return infos if all(i and "namespace" in i for i in infos) else None
    return wait_for(ready, timeout=30, what="the jobs named")


def test_each_pod_is_named_by_the_kubelet(tmp_path, pods, gpus):
    socket = tmp_path / "kubelet.sock"
    with Kubelet(socket, LISTED) as kubelet:
        agent = Agent(tmp_path, None, "--kubelet-socket", str(socket), gpus=gpus)
        try:
            x, y, z = named(agent, POD_X, POD_Y, POD_Z)
        finally:
            code, err = agent.stop()
    assert code == 0, err
    assert (x["namespace"], x["pod"], x["container"]) == ("vision", "trainer-x", "trainer")
    assert (y["namespace"], y["pod"], y["container"]) == ("nlp", "llm-1", "worker")
    assert (z["namespace"], z["pod"], z["container"]) == ("research", "notebook-z", "jupyter")
    assert x["kind"] == "kubernetes" and x["job"] == POD_X
    assert "kubelet" not in err, err
    # Asked when a job had no name, not at every tick.
    assert 1 <= kubelet.calls <= 3, kubelet.calls


def test_a_kubelet_that_cannot_be_asked_costs_the_names_only(tmp_path, pods, gpus):
    missing = tmp_path / "nowhere.sock"
    agent = Agent(tmp_path, None, "--kubelet-socket", str(missing), gpus=gpus)
    try:
        def served():
            s = agent.series()
            infos = [info_of(agent, s, j) for j in (POD_X, POD_Y, POD_Z)]
            return infos if all(infos) else None
        x, y, z = wait_for(served, timeout=30, what="the pods served")
    finally:
        code, err = agent.stop()
    assert code == 0, err
    # The pod's host name is all that names it; the container is its short id.
    assert (y.get("pod"), y.get("namespace"), y["container"]) == ("llm-1", None, CID_Y[:12])
    said = [l for l in err.splitlines() if "kubelet" in l]
    assert said == [f"trainvitals serve: kubelet: cannot list the pods from the kubelet "
                    f"({missing}): cannot connect to {missing}: No such file or directory; "
                    f"Kubernetes jobs keep their pod UID without their names"], err

    socket = tmp_path / "kubelet.sock"
    with Kubelet(socket, LISTED) as kubelet:
        import grpc
        kubelet.status, kubelet.details = grpc.StatusCode.UNAVAILABLE, "the kubelet is starting"
        agent = Agent(tmp_path, None, "--kubelet-socket", str(socket), gpus=gpus)
        try:
            wait_for(lambda: kubelet.calls >= 1, timeout=30, what="the kubelet asked")
            kubelet.status = None  # it came up: asked again within kAsk_s
            named(agent, POD_X, POD_Y, POD_Z)
        finally:
            code, err = agent.stop()
    assert code == 0, err
    assert ("kubelet: cannot list the pods from the kubelet "
            f"({socket}): it answered gRPC status 14: the kubelet is starting") in err, err


def test_an_agent_in_a_cgroup_namespace_of_its_own_reads_each_pods_cgroup(tmp_path, pods, gpus):
    """As in a pod on cgroup v2: the agent in a cgroup below the root, in a
    namespace of its own (unshare --cgroup), sees the other pods' cgroups as
    "/../../kubepods/..." and the host's tree mounted whole as "/../..". Each
    pod's figures are still its own cgroup's, not the node's."""
    agent_cgroup = f"/trainvitals-agent-{os.getpid()}/inner"
    where = placed({"unified": agent_cgroup, "v1": agent_cgroup})
    prefix = [*helper("in_cgroup.py"), *where, "--", "unshare", "--cgroup"]
    agent = Agent(tmp_path, None, "--kubelet-socket", str(tmp_path / "none.sock"), gpus=gpus,
                  prefix=prefix)
    try:
        def figures():
            s = agent.series()
            memory = {j: agent.value(s, "trainvitals_job_memory_bytes", job=j)
                      for j in (POD_X, POD_Z)}
            return memory if all(memory.values()) else None
        memory = wait_for(figures, timeout=30, what="each pod's memory from its cgroup")
        with open(f"/proc/{agent.proc.pid}/cgroup") as f:
            assert agent_cgroup in f.read()  # where the agent's namespace starts
    finally:
        code, err = agent.stop()
        for root in hierarchies().values():
            remove_tree(os.path.join(root, agent_cgroup.split("/")[1]))
    assert code == 0, err
    # Each pod holds its 20 MiB and a Python: its own cgroup, not the node's.
    for job, value in memory.items():
        assert 20 << 20 <= value <= 200 << 20, (job, value)
    assert "cgroup namespace" not in err, err

