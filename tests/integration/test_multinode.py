"""One DDP job on two nodes of this machine, each node under its own
`trainvitals run`, judged as one job by `trainvitals analyze --json RUN0 RUN1`.

The nodes (multinode_nodes.py) are network, PID, mount and UTS namespaces named
tvnode0 and tvnode1, joined by a bridge in a namespace of their own. On each,
`trainvitals run -- torchrun --nnodes 2 --nproc_per_node 2 --node_rank K ...`
starts two ranks of helpers/multinode_train.py (gloo, CPU), four in all. In the
slowed job the DataLoader of global rank 3 (tvnode1's second rank) sleeps a
planted time for every batch, so that rank waits for its data at every step
while the other three wait for it in the all-reduce; the healthy job has no
slow rank. The findings' windows are shortened so ~25 s of training is judged
as a long run would be. Root only (marker `multinode`).
"""
import functools
import json
import os
import subprocess
import time

import pytest

from conftest import HELPERS, cli_path, read_jsonl
from multinode_nodes import make_nodes, tail
from test_frameworks import TORCH_PY, env

pytestmark = pytest.mark.multinode

NODES = ("tvnode0", "tvnode1")
RANKS_PER_NODE = 2
SLOW_RANK = 3  # global: tvnode1's second rank
SLEEP_MS = 60  # planted in each of its batches
DEVICE_MS = 35  # every step's wait for its "device": rank 3 waits ~60 of ~100 ms for data
SECONDS = 25  # of training per job
RUN_TIMEOUT_S = 150
PORTS = {"slowed": 29511, "healthy": 29512}  # on tvnode0's own network
# Short windows: ~25 s of training judged as a long run is by the defaults.
CONFIG = """[findings]
warmup_s = 3
judge_min_s = 3
judge_min_steps = 10
window_s = 8
open_s = 2
hold_s = 8
"""
# What the test's own environment may hold that would make the ranks join
# another job or report to another supervisor.
FOREIGN = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
           "MASTER_PORT", "TORCHELASTIC_", "SLURM_", "TRAINVITALS_SOCKET", "TRAINVITALS_RUN_DIR",
           "TRAINVITALS_CONFIG", "CUDA_VISIBLE_DEVICES")


@functools.cache
def torchrun():
    """torchrun of the project's environment: its script where it has one,
    else the same launcher as a module of its interpreter.

    torch before 2.0 under Python 3.11 cannot read its own default `--redirects 0`
    and `--tee 0` (its `Std.from_str` looks for 0 among the members of an IntFlag,
    which 3.11 no longer lists), so there both are given as 2: each rank's stderr
    goes to a file in torchrun's log directory and on to the console, as before."""
    script = TORCH_PY.parent / "torchrun"
    launcher = [str(script)] if script.exists() else [str(TORCH_PY), "-m", "torch.distributed.run"]
    probe = ("import importlib.metadata as m, sys\n"
             "print(int(m.version('torch').split('.')[0]) < 2 and sys.version_info >= (3, 11))")
    old = subprocess.run([str(TORCH_PY), "-c", probe], capture_output=True, text=True)
    if old.stdout.strip() != "False":
        launcher += ["--redirects", "2", "--tee", "2"]
    return launcher


@pytest.fixture(scope="module")
def cluster():
    if not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it")
    switch, nodes = make_nodes(NODES, str(TORCH_PY))
    try:
        yield nodes
    finally:
        for node in nodes:
            node.stop()
        switch.stop()


class Job:
    """Both nodes' runs of one job: `runs[k]` node k's run directory, `truth`
    each global rank's own account (helpers/multinode_train.py)."""

    def __init__(self, kind, tmp, nodes):
        self.kind, self.tmp, self.nodes = kind, tmp, nodes
        self.runs = [tmp / f"run-{node.name}" for node in nodes]
        self.logs = [tmp / f"{node.name}.log" for node in nodes]
        self.truth_dir = tmp / "truth"
        self.truth_dir.mkdir()
        self.config = tmp / "trainvitals.toml"
        self.config.write_text(CONFIG)
        self.commands = []
        self.truth = {}

    def node_env(self, node):
        """What a node's shell would hold: the project's Python path, and its
        own temporary, data and runtime directories (each node is its own machine)."""
        base = {k: v for k, v in env().items() if not k.startswith(FOREIGN)}
        own = {}
        for key in ("TMPDIR", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
            path = self.tmp / node.name / key.lower()
            path.mkdir(parents=True, mode=0o700)
            own[key] = str(path)
        # gloo finds its own address by the host name, which no resolver knows here.
        return {**base, **own, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1"}

    def command(self, k):
        slow = SLOW_RANK if self.kind == "slowed" else -1
        return [cli_path(), "run", "--out", str(self.runs[k]), "--interval", "0.5",
                "--config", str(self.config), "--",
                *torchrun(), "--nnodes", str(len(self.nodes)),
                "--nproc_per_node", str(RANKS_PER_NODE), "--node_rank", str(k),
                "--master_addr", self.nodes[0].address, "--master_port", str(PORTS[self.kind]),
                str(HELPERS / "multinode_train.py"), "--seconds", str(SECONDS),
                "--sleep-ms", str(SLEEP_MS), "--slow-rank", str(slow),
                "--device-ms", str(DEVICE_MS), "--truth", str(self.truth_dir)]

    def said(self, k):
        return f"{self.nodes[k].name} ran `{' '.join(self.commands[k])}`; its output ends:\n" \
               f"{tail(self.logs[k].read_text(errors='replace'), 25)}"

    def everything_said(self):
        return "\n\n".join(self.said(k) for k in range(len(self.commands)))

    def run(self):
        # Without a job id each node names the job by the rendezvous and its own
        # start minute: two starts a few milliseconds apart must not straddle a minute.
        while not 0.5 <= time.time() % 60 <= 59:
            time.sleep(0.2)
        procs, opened = [], []
        try:
            for k, node in enumerate(self.nodes):
                self.commands.append(self.command(k))
                opened.append(open(self.logs[k], "w"))
                procs.append(node.run(self.commands[k], env=self.node_env(node), cwd=self.tmp,
                                      stdout=opened[-1], stderr=subprocess.STDOUT))
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
                if any(p.poll() not in (None, 0) for p in procs):
                    # The other node's ranks would wait for the lost ones until timeouts.
                    deadline = min(deadline, time.monotonic() + 10)
                time.sleep(0.5)
            late = [self.nodes[k].name for k, p in enumerate(procs) if p.poll() is None]
            for node in self.nodes:
                node.kill_all()
            for proc in procs:
                proc.wait()
        finally:
            for f in opened:
                f.close()
        failed = [f"{self.nodes[k].name} " + (f"exited {p.returncode}" if p.returncode > 0
                                              else f"died of signal {-p.returncode}")
                  for k, p in enumerate(procs)
                  if p.returncode != 0 and self.nodes[k].name not in late]
        if late or failed:
            said = failed + ([f"{', '.join(late)} still ran after {RUN_TIMEOUT_S} s or 10 s "
                              "after the other ended"] if late else [])
            pytest.fail(f"{self.kind} job: trainvitals run on {'; '.join(said)}\n\n"
                        f"{self.everything_said()}", pytrace=False)
        world = len(self.nodes) * RANKS_PER_NODE
        for rank in range(world):
            path = self.truth_dir / f"rank{rank}.json"
            if not path.exists():
                pytest.fail(f"{self.kind} job: rank {rank} wrote no {path.name}\n\n"
                            f"{self.everything_said()}", pytrace=False)
            self.truth[rank] = json.loads(path.read_text())

    def planted(self, rank=SLOW_RANK):
        """The rank's planted share of its step time: the sleep in each batch
        times its own step rate (steps over its training wall time)."""
        t = self.truth[rank]
        return t["sleep_per_batch_s"] * t["steps"] / t["train_s"]

    def fetched(self, rank=SLOW_RANK):
        """The rank's own clock's share of waiting for batches."""
        t = self.truth[rank]
        return t["fetched_s"] / t["train_s"]


@pytest.fixture(scope="module", params=["slowed", "healthy"])
def job(request, cluster, tmp_path_factory):
    j = Job(request.param, tmp_path_factory.mktemp(f"multinode-{request.param}"), cluster)
    j.run()
    print(f"{j.kind}: steps {[j.truth[r]['steps'] for r in sorted(j.truth)]}, "
          f"train_s {[round(j.truth[r]['train_s'], 1) for r in sorted(j.truth)]}, "
          f"rank {SLOW_RANK} planted {j.planted():.3f}, own clock {j.fetched():.3f}")
    return j


def analyze(job, *dirs):
    args = [cli_path(), "analyze", "--json", *map(str, dirs)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, \
        f"`{' '.join(args)}` exited {done.returncode}; stderr:\n{tail(done.stderr)}"
    try:
        return json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"`{' '.join(args)}` printed no JSON: {done.stdout[:2000]!r}")


def stragglers(verdict):
    return [f for f in verdict["findings"] if f["id"] == "straggler"]


def ranks_seen(run_dir):
    return {r["rank"] for row in read_jsonl(run_dir / "samples.jsonl")
            for r in row.get("training", {}).get("ranks", [])}


def test_each_node_records_its_own_host_and_its_two_ranks(job):
    for k, (node, run) in enumerate(zip(job.nodes, job.runs)):
        assert (run / "meta.json").exists(), job.said(k)
        assert (run / "summary.json").exists(), job.said(k)
        meta = json.loads((run / "meta.json").read_text())
        assert meta["host"] == node.name, (node.name, meta["host"])
        own = set(range(k * RANKS_PER_NODE, (k + 1) * RANKS_PER_NODE))
        assert ranks_seen(run) == own, (node.name, ranks_seen(run))
        # The ranks themselves say where they ran.
        assert {job.truth[r]["host"] for r in own} == {node.name}
        summary = json.loads((run / "summary.json").read_text())
        for epoch in summary["epochs"]:
            assert {r["rank"] for r in epoch.get("ranks", [])} <= own, epoch
    # DDP steps every rank together.
    assert len({t["steps"] for t in job.truth.values()}) == 1, job.truth
    # One job, one identity on both nodes (the rendezvous and the start minute).
    jobs = [json.loads((run / "meta.json").read_text()).get("job") or {} for run in job.runs]
    assert [j.get("node_rank") for j in jobs] == list(range(len(NODES))), jobs
    assert jobs[0].get("id") and jobs[0].get("id") == jobs[1].get("id"), jobs


def test_each_nodes_own_run_judges_the_ranks_it_saw(job):
    """Each node's run alone, as `analyze --json DIR` judges it: tvnode1's has
    rank 3 waiting for its data beside rank 2, tvnode0's two ranks wait alike."""
    node0, node1 = (analyze(job, run) for run in job.runs)
    assert stragglers(node0) == [], node0["findings"]
    if job.kind == "healthy":
        assert stragglers(node1) == [], node1["findings"]
        return
    planted = job.planted()
    assert 0.4 <= planted <= 0.85, (planted, job.truth[SLOW_RANK])
    (found,) = stragglers(node1)
    assert found["subject"]["rank"] == SLOW_RANK, found
    evidence = found["evidence"]
    print("tvnode1 alone:", json.dumps(found))
    assert evidence["data_wait_ratio"] == pytest.approx(planted, abs=0.1), (evidence, planted)
    assert evidence["others_data_wait_ratio"] < 0.15, evidence


def test_the_joined_job_names_the_slow_rank_and_its_node(job):
    verdict = analyze(job, *job.runs)
    print("joined:", json.dumps({k: verdict.get(k) for k in ("job", "findings")}))
    meta = json.loads((job.runs[0] / "meta.json").read_text())
    assert verdict["job"] == meta["job"]["id"], (verdict["job"], meta["job"])
    assert [n["node"] for n in verdict["nodes"]] == list(NODES), verdict["nodes"]
    for n, run in zip(verdict["nodes"], job.runs):
        assert os.path.realpath(n["run_dir"]) == os.path.realpath(run), n
        assert n["ended"] is True, n
        assert n["rows"] == len(read_jsonl(run / "samples.jsonl")) > 0, n
        # Both nodes read one clock: this machine's.
        offset = n["clock_offset_s"]
        assert isinstance(offset, (int, float)) and not isinstance(offset, bool), n
        assert abs(offset) < 1.0, n
        assert "score" in n["health"], n
    assert "score" in verdict["health"], verdict["health"]
    found = stragglers(verdict)
    if job.kind == "healthy":
        assert found == [], verdict["findings"]
        return
    assert len(found) == 1, verdict["findings"]
    subject = found[0]["subject"]
    assert (subject.get("rank"), subject.get("node")) == (SLOW_RANK, "tvnode1"), found[0]
    evidence = found[0]["evidence"]
    for key in ("window_s", "data_wait_ratio", "others_data_wait_ratio", "steps_per_second"):
        assert key in evidence, found[0]
    assert evidence["data_wait_ratio"] == pytest.approx(job.planted(), abs=0.1), \
        (evidence, job.planted())
    assert found[0]["message"] and found[0]["advice"], found[0]
