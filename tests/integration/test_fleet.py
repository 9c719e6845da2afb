"""A fleet on one machine: three nodes, each a network and PID namespace with
its own `trainvitals serve` on the fake driver, scraped by one real Prometheus
with the shipped rules (deploy/prometheus/serve_rules.yml). Slurm job A runs
one rank on node1 and one on node2, each keeping its GPU 90 % busy; job B
holds one GPU of node3 at 10 %; every node has a second GPU nobody holds. The
fleet's questions in PromQL count each node's jobs once. `make test-fleet`."""
import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import ROOT, cli_path, helper
from fleet_nodes import Node, free_subnets, skip_reason
from prom_services import query, start_prometheus, wait_for
from test_gpus import FAKE
from test_serve import hierarchies, need_cgroups, placed, remove_tree

pytestmark = pytest.mark.fleet

JOB_A = str(920000 + os.getpid() % 1000)
JOB_B = str(int(JOB_A) + 1)
LINGER_S = 5
PORT = 9402  # each node has its own network: every agent listens where deployed
# (node, job, user, busy share of the GPU it computes on); a node's GPU 1 is held by nobody.
RANKS = [("node1", JOB_A, "alice", 0.9), ("node2", JOB_A, "alice", 0.9),
         ("node3", JOB_B, "bob", 0.1)]


def cgroup_of(node, job):
    """The job's step on that node, as each node's slurmd would place it; the
    node in the path keeps the two nodes' ranks of job A in cgroups of their own."""
    return {"unified": f"/system.slice/{node}_slurmstepd.scope/job_{job}/step_0/user/task_0",
            "v1": f"/slurm_{node}/uid_0/job_{job}/step_0/task_0"}


def scenario(path, pidfile, busy):
    devices = [{"name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{uuid.uuid4()}",
                "series": {"util_gpu": 100 * busy, "memory_used_bytes": 4e9},
                "processes": [{"pid": f"@{pidfile}", "memory_bytes": 3e9,
                               "sm_util": 100 * busy}]},
               {"name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{uuid.uuid4()}",
                "series": {"util_gpu": 0}, "processes": []}]
    path.write_text(json.dumps({"devices": devices}))
    return path


def start_rank(node, job, user, pidfile, env):
    """The job's rank on the node, in its Slurm cgroup; it writes its PID, as the
    node's PID namespace numbers it, for the node's fake driver to name as its
    GPU's process."""
    rank = node.run(["sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pidfile),
                     *helper("in_cgroup.py"), *placed(cgroup_of(node.name, job)), "--",
                     *helper("job_work.py"), "20", "0.02"],
                    env={**env, "SLURM_JOB_ID": job, "SLURM_JOB_USER": user,
                         "SLURM_JOB_ACCOUNT": f"{user}-lab", "SLURM_JOB_GPUS": "0"},
                    stdout=subprocess.PIPE, text=True)
    assert rank.stdout.readline().strip() == "ready"
    return rank


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Prometheus (`url`) scraping the three nodes' agents, with `nodes`,
    `ranks` and `agents` by node."""
    if skip_reason():
        pytest.skip(skip_reason())
    need_cgroups()
    tmp = tmp_path_factory.mktemp("fleet")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CUDA_"))}
    nodes, ranks, agents, prom, logs_open = {}, {}, {}, None, []
    try:
        for (name, job, user, busy), octet in zip(RANKS, free_subnets(len(RANKS))):
            node = nodes[name] = Node(name, octet, tmp)
            pidfile = tmp / f"{name}-{job}.pid"
            ranks[name] = start_rank(node, job, user, pidfile, env)
            gpus = scenario(tmp / f"{name}.json", pidfile, busy)
            logs_open.append(open(tmp / f"{name}-serve.log", "w"))
            agents[name] = node.run(
                [cli_path(), "serve", "--listen", f":{PORT}", "--node", name, "--interval", "0.5",
                 "--linger", str(LINGER_S)],
                env={**env, "TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(gpus)},
                stdout=logs_open[-1], stderr=subprocess.STDOUT)
        shipped = ROOT / "deploy/prometheus/serve_rules.yml"
        rules = tmp / "serve_rules.yml"  # evaluated each second here, not each minute
        rules.write_text(shipped.read_text().replace("interval: 1m", "interval: 1s"))
        # As deploy/prometheus/prometheus.yml scrapes agents: the job label is the cluster's job.
        prom = start_prometheus(tmp, [f"{n.address}:{PORT}" for n in nodes.values()],
                                rule_files=[rules], honor_labels=True)
        prom.nodes, prom.ranks, prom.agents, prom.logs = nodes, ranks, agents, tmp
        yield prom
    finally:
        if prom:
            prom.stop()
        for node in nodes.values():
            node.stop()
        for log in logs_open:
            log.close()
        for root in hierarchies().values():
            for name in nodes:
                remove_tree(f"{root}/system.slice/{name}_slurmstepd.scope")
                remove_tree(f"{root}/slurm_{name}")


def answer(prom, expr, key=("job",)):
    """{label values of `key`: value} of an instant query; fails on an error."""
    got = query(prom.url, expr)
    assert got["status"] == "success", (expr, got)
    return {tuple(r["metric"].get(k, "") for k in key) if len(key) != 1
            else r["metric"].get(key[0], ""): float(r["value"][1])
            for r in got["data"]["result"]}


def logs(prom):
    return {p.name: p.read_text() for p in sorted(prom.logs.glob("*-serve.log"))}


def settled(prom):
    """Waits until every rank is counted by the rules, and its series has been
    scraped for longer than a 10 s rate window (one that reaches back past a
    series' first sample rates it low)."""
    want = {JOB_A: 2, JOB_B: 1}

    def ready():
        held = answer(prom, "sum by (job) (trainvitals:job_gpus_held)")
        samples = answer(prom, "count_over_time(trainvitals_job_gpu_held_seconds_total[12s])",
                         key=("host",))
        return held == want and len(samples) == 3 and min(samples.values()) >= 11

    try:
        wait_for(ready, timeout=40, what="the rules counting every rank")
    except pytest.fail.Exception as e:
        pytest.fail(f"{e}; the agents said: {logs(prom)}")


def test_each_node_serves_only_its_own_jobs_under_its_own_name(fleet):
    settled(fleet)
    up = answer(fleet, "up", key=("instance",))
    assert up == {f"{n.address}:{PORT}": 1 for n in fleet.nodes.values()}, up
    # One target per node, each with its own name.
    hosts = answer(fleet, "count by (host, instance) (trainvitals_jobs)", key=("host", "instance"))
    assert sorted(hosts) == [(name, f"{n.address}:{PORT}") for name, n in fleet.nodes.items()]
    # Each agent sees its node's processes only: job A on two nodes, B on one.
    info = answer(fleet, "trainvitals_job_info", key=("host", "job", "kind", "user", "account"))
    assert set(info) == {(n, j, "slurm", u, f"{u}-lab") for n, j, u, _ in RANKS}, info
    running = answer(fleet, 'trainvitals_jobs{state="running"}', key=("host",))
    assert running == {"node1": 1, "node2": 1, "node3": 1}, running
    assert answer(fleet, "count(trainvitals_gpu_util_ratio)", key=()) == {(): 6}


def test_a_job_on_two_nodes_holds_one_gpu_on_each_counted_once(fleet):
    settled(fleet)
    assert answer(fleet, "sum by (job) (trainvitals:job_gpus_held)") == {JOB_A: 2, JOB_B: 1}
    assert answer(fleet, "trainvitals:user_gpus_held", key=("user",)) == {"alice": 2, "bob": 1}
    # docs/cluster.md's "GPUs held per user": its info join is on host and job,
    # so the two nodes' info series of job A join their own rank each.
    per_user = answer(fleet, "sum by (user) (trainvitals_job_gpus_held * on (host, job) "
                             "group_left (user) trainvitals_job_info)", key=("user",))
    assert per_user == {"alice": 2, "bob": 1}
    # Joined on the job alone, a job on two nodes is an error, never a product.
    wrong = query(fleet.url, "trainvitals_job_gpus_held * on (job) group_left (user) "
                             "trainvitals_job_info")
    assert wrong["status"] == "error" and "duplicate series" in wrong["error"], wrong
    # GPU-hours: GPU-seconds held grow by the GPUs held each second, summed
    # over the job's nodes. A scrape reads the counter of the agent's latest
    # tick (0.5 s, later under load), at either end of a window of 9 s or so:
    # within 15 %.
    rate = answer(fleet, "sum by (job) (rate(trainvitals_job_gpu_held_seconds_total[10s]))")
    assert rate[JOB_A] == pytest.approx(2, rel=0.15), rate
    assert rate[JOB_B] == pytest.approx(1, rel=0.15), rate
    # The GPUs nobody holds: one a node.
    free = answer(fleet, "count by (host) (trainvitals_gpu_util_ratio unless on (host, gpu) "
                         "trainvitals_job_gpu_allocated)", key=("host",))
    assert free == {"node1": 1, "node2": 1, "node3": 1}, free


def test_each_jobs_busy_share_is_that_of_its_gpus(fleet):
    settled(fleet)
    # The fake's utilisation is constant: each rule evaluation sees 0.9 or 0.1.
    share = answer(fleet, "sum by (job) (trainvitals:job_gpus_busy) "
                          "/ sum by (job) (trainvitals:job_gpus_held)")
    assert share[JOB_A] == pytest.approx(0.9, abs=0.01), share
    assert share[JOB_B] == pytest.approx(0.1, abs=0.01), share
    # The agents' own counters: both advance on the same ticks, so over one window
    # their ratio is the busy share but for a tick without a sample at an end.
    counted = answer(fleet, "sum by (job) (rate(trainvitals_job_gpu_busy_seconds_total[10s])) "
                            "/ sum by (job) (rate(trainvitals_job_gpu_held_seconds_total[10s]))")
    assert counted[JOB_A] == pytest.approx(0.9, abs=0.03), counted
    assert counted[JOB_B] == pytest.approx(0.1, abs=0.03), counted


def test_the_waste_queries_name_the_job_that_wastes_its_gpu_and_its_user(fleet):
    settled(fleet)
    key = ("host", "job", "user")
    # docs/cluster.md: jobs that hold GPUs at under 30 % busy, with their user.
    low = answer(fleet, "(avg by (host, job) (avg_over_time(trainvitals_gpu_util_ratio[1h]) "
                        "* on (host, gpu, mig) group_right () "
                        "(trainvitals_job_gpu_allocated * 0 + 1)) < 0.3) "
                        "* on (host, job) group_left (user) trainvitals_job_info", key=key)
    assert set(low) == {("node3", JOB_B, "bob")}, low
    # The fleet dashboard's busy share per job: each rank of A at 0.9.
    dash = json.loads((ROOT / "deploy/grafana/trainvitals-fleet.json").read_text())
    panel = next(p for p in dash["panels"] if p["title"] == "GPU busy share per job")
    expr = panel["targets"][0]["expr"].replace("$node", ".*").replace("$user", ".*")
    busy = answer(fleet, expr, key=key)
    assert busy == pytest.approx({("node1", JOB_A, "alice"): 0.9, ("node2", JOB_A, "alice"): 0.9,
                                  ("node3", JOB_B, "bob"): 0.1}, abs=0.01), busy
    # The rules: GPUs wasted per job and per user.
    wasted = answer(fleet, "sum by (job, user) (trainvitals:job_gpus_wasted)", key=("job", "user"))
    assert wasted == pytest.approx({(JOB_A, "alice"): 0.2, (JOB_B, "bob"): 0.9}, abs=0.02)
    worst = answer(fleet, "topk(1, trainvitals:job_gpus_wasted)", key=key)
    assert list(worst) == [("node3", JOB_B, "bob")], worst
    hours = answer(fleet, "trainvitals:job_gpu_hours_wasted:1h", key=key)
    assert set(hours) == {("node1", JOB_A, "alice"), ("node2", JOB_A, "alice"),
                          ("node3", JOB_B, "bob")}, hours
    assert max(hours, key=hours.get) == ("node3", JOB_B, "bob"), hours


def test_a_rank_that_ends_lingers_then_goes_on_its_node_only(fleet):
    settled(fleet)
    killed = time.monotonic()
    fleet.nodes["node2"].kill_inside(fleet.ranks["node2"])
    # While its series linger the ended rank holds no GPU in the rules.
    lingering = f'trainvitals_job_running{{host="node2", job="{JOB_A}"}} == 0'
    seen = []

    def one_held():
        # The rules evaluate apart from the scrapes: the first answer after the
        # end may be the evaluation before it.
        seen.append(answer(fleet, f'sum(trainvitals:job_gpus_held{{job="{JOB_A}"}}) '
                                  f"and on () ({lingering})", key=()))
        return seen[-1] == {(): 1}

    try:
        wait_for(one_held, timeout=LINGER_S + 10, what="the ended rank's GPU no longer held")
    except pytest.fail.Exception as e:
        pytest.fail(f"{e}; GPUs of job A held in the rules while node2's rank lingered: "
                    f"{[s[()] for s in seen if s]}")
    assert answer(fleet, f'trainvitals_job_running{{job="{JOB_A}"}}', key=("host",)) == {
        "node1": 1, "node2": 0}
    wait_for(lambda: answer(fleet, f'trainvitals_job_info{{job="{JOB_A}"}}', key=("host",))
             == {"node1": 1}, timeout=LINGER_S + 10, what="the ended rank's series gone")
    # Not before --linger from the tick that found it gone (half a tick of slack).
    assert time.monotonic() - killed >= LINGER_S - 0.5
    assert answer(fleet, f'trainvitals_job_running{{job="{JOB_A}"}}', key=("host",)) == {
        "node1": 1}
    assert answer(fleet, "trainvitals_job_info", key=("host", "job")) == {
        ("node1", JOB_A): 1, ("node3", JOB_B): 1}
    assert answer(fleet, 'trainvitals_jobs{state="running"}', key=("host",)) == {
        "node1": 1, "node2": 0, "node3": 1}
    wait_for(lambda: answer(fleet, "sum by (job) (trainvitals:job_gpus_held)")
             == {JOB_A: 1, JOB_B: 1}, timeout=10, what="job A held on node1 alone")
    # Every agent went on.
    assert all(a.poll() is None for a in fleet.agents.values()), logs(fleet)
    assert set(answer(fleet, "up == 1", key=("instance",))) == {
        f"{n.address}:{PORT}" for n in fleet.nodes.values()}
