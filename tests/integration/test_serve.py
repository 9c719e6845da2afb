"""`trainvitals serve`: one agent for the node finds each job from the cgroups
its processes are in (Kubernetes pods under the cgroupfs and the systemd
drivers, a Slurm job, a GPU process in no job's cgroup), gives each job its
own CPU, memory and GPU figures, and serves them for a fleet: who a job is in
one info series, its figures labelled by job alone."""
import contextlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from conftest import ROOT, cli_path, helper
from prom_services import free_port, http_get, need, query, start_prometheus, wait_for
from test_dashboard import as_promql
from test_gpus import FAKE

POD_A = str(uuid.uuid4())
POD_B = str(uuid.uuid4())
POD_C = str(uuid.uuid4())
CID_A = uuid.uuid4().hex * 2
CID_B = uuid.uuid4().hex * 2
SLURM_JOB = str(900000 + os.getpid() % 1000)


def hierarchies():
    """The roots of the hierarchies a job is placed in: the unified one and v1
    cpuacct and memory, where mounted."""
    roots = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            head, _, tail = line.partition(" - ")
            fs, _, options = tail.split()[:3]
            point = head.split()[4]
            if fs == "cgroup2":
                roots.setdefault("unified", point)
            elif fs == "cgroup":
                for controller in ("cpuacct", "memory"):
                    if controller in options.split(","):
                        roots.setdefault(controller, point)
    return roots


def placed(paths):
    """Directories for one process: the path in each hierarchy (`paths` maps
    "unified" and "v1" to a cgroup path)."""
    dirs = []
    for name, root in hierarchies().items():
        dirs.append(root + (paths["unified"] if name == "unified" else paths["v1"]))
    return dirs


def remove_tree(directory):
    for d, _, _ in sorted(os.walk(directory), key=lambda w: -len(w[0])):
        try:
            os.rmdir(d)
        except OSError:
            pass


def need_cgroups():
    """The hierarchies' roots (hierarchies()); the test is skipped where no
    cgroup can be made."""
    roots = hierarchies()
    probe = os.path.join(roots.get("unified", "/sys/fs/cgroup"),
                         f"trainvitals-probe-{os.getpid()}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError as e:
        pytest.skip(f"cgroups cannot be made here ({e}): the agent's job discovery needs them")
    return roots


@contextlib.contextmanager
def ready_processes(start, roots, tops):
    """The processes start(procs) puts in procs, by name, each of which says
    "ready": their PIDs, while the block runs; then they are killed and the
    cgroup trees `tops` are removed under each of `roots`."""
    procs = {}
    try:
        start(procs)
        for p in procs.values():
            assert p.stdout.readline().strip() == "ready"
        yield {name: p.pid for name, p in procs.items()}
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        for root in roots.values():
            for top in tops:
                remove_tree(os.path.join(root, top))


@pytest.fixture(scope="module")
def node():
    roots = need_cgroups()
    pod_a = f"/kubepods/burstable/pod{POD_A}/{CID_A}"
    pod_b = (f"/kubepods.slice/kubepods-pod{POD_B.replace('-', '_')}.slice/"
             f"cri-containerd-{CID_B}.scope")
    pod_c = f"/kubepods/besteffort/pod{POD_C}/{CID_A}"
    slurm = {"unified": f"/system.slice/slurmstepd.scope/job_{SLURM_JOB}/step_0/user/task_0",
             "v1": f"/slurm/uid_0/job_{SLURM_JOB}/step_0/task_0"}
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CUDA_"))}
    jobs = {
        "a": ({"unified": pod_a, "v1": pod_a}, 200, 0.5,
              {"HOSTNAME": "trainer-a", "POD_NAMESPACE": "vision"}),
        "b": ({"unified": pod_b, "v1": pod_b}, 50, 0.2, {"HOSTNAME": "trainer-b"}),
        "c": ({"unified": pod_c, "v1": pod_c}, 20, 0.0, {"HOSTNAME": "web-c"}),
        "slurm": (slurm, 100, 0.3,
                  {"SLURM_JOB_ID": SLURM_JOB, "SLURM_JOB_USER": "alice",
                   "SLURM_JOB_ACCOUNT": "ml", "SLURM_JOB_PARTITION": "gpu",
                   "SLURM_JOB_GPUS": "1"}),
    }
    def start(procs):
        for name, (paths, mib, share, env) in jobs.items():
            procs[name] = subprocess.Popen(
                [*helper("in_cgroup.py"), *placed(paths), "--",
                 *helper("job_work.py"), str(mib), str(share)],
                env={**base, **env}, stdout=subprocess.PIPE, text=True)
        # A process in no job's cgroup that uses a GPU: a job of its session.
        procs["tree"] = subprocess.Popen([*helper("job_work.py"), "30", "0.1"], env=base,
                                         stdout=subprocess.PIPE, text=True,
                                         start_new_session=True)

    with ready_processes(start, roots, ("kubepods", "kubepods.slice", "slurm",
                                        f"system.slice/slurmstepd.scope/job_{SLURM_JOB}")) as pids:
        yield pids


def scenario(tmp_path, node):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"devices": [
        {"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 70},
         "processes": [{"pid": node["a"], "memory_bytes": 3e9, "sm_util": 60},
                       {"pid": node["tree"], "memory_bytes": 1e9, "sm_util": 10}]},
        {"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 0},
         "processes": [{"pid": node["b"], "memory_bytes": 5e9, "sm_util": 0}]},
    ]}))
    return path


class Agent:
    def __init__(self, tmp_path, node, *flags, gpus=None, prefix=()):
        self.port = free_port()
        env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
               "FAKE_NVML_SCENARIO": str(gpus or scenario(tmp_path, node))}
        self.proc = subprocess.Popen(
            [*prefix, cli_path(), "serve", "--listen", f"127.0.0.1:{self.port}", "--node", "node-1",
             *flags], env=env, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}/metrics"

    def text(self):
        if self.proc.poll() is not None:
            pytest.fail(f"serve ended ({self.proc.returncode}): {self.proc.stderr.read()}")
        return http_get(self.url)[2]

    def series(self, text=None):
        """{(name, frozenset(labels)): value} of a scrape."""
        out = {}
        for line in (text or self.text()).splitlines():
            m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
            if m:
                labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
                out[(m.group(1), labels)] = float(m.group(3))
        return out

    def value(self, series, name, **labels):
        for (n, ls), v in series.items():
            if n == name and set(labels.items()) <= ls:
                return v
        return None

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err


@pytest.fixture
def agent(tmp_path, node):
    started = []

    def start(*flags, gpus=None):
        a = Agent(tmp_path, node, *flags, gpus=gpus)
        started.append(a)
        return a

    yield start
    for a in started:
        if a.proc.poll() is None:
            a.proc.kill()
            a.proc.wait()


def info_of(agent, series, job):
    for (n, ls), _ in series.items():
        if n == "trainvitals_job_info" and ("job", job) in ls:
            return dict(ls)
    return None


def test_each_job_is_found_from_its_cgroup_with_its_own_figures(agent, node):
    a = agent()
    tree = f"tree-{node['tree']}"
    want = [POD_A, POD_B, SLURM_JOB, tree]

    def ready():
        s = a.series()
        have = all(a.value(s, "trainvitals_job_cpu_cores", job=j) is not None
                   for j in (POD_A, POD_B, SLURM_JOB))
        sm = a.value(s, "trainvitals_gpu_job_sm_util_ratio", job=POD_A, gpu="0")
        return s if have and sm and all(info_of(a, s, j) for j in want) else None

    s = wait_for(ready, timeout=30, what="every job served with its figures")
    check = subprocess.run([need("promtool"), "check", "metrics"], input=a.text(),
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr

    # Who each job is: from its cgroup path and its environment.
    assert info_of(a, s, POD_A) == {"host": "node-1", "job": POD_A, "kind": "kubernetes",
                                    "user": "root", "pod": "trainer-a", "namespace": "vision",
                                    "container": CID_A[:12], "node": "node-1"}
    assert info_of(a, s, POD_B)["container"] == CID_B[:12]
    assert info_of(a, s, SLURM_JOB) == {"host": "node-1", "job": SLURM_JOB, "kind": "slurm",
                                        "user": "alice", "account": "ml", "partition": "gpu",
                                        "node": "node-1"}
    assert info_of(a, s, tree)["kind"] == "tree"
    # A pod that uses no GPU and was given none is not served; nor is the agent.
    assert info_of(a, s, POD_C) is None
    assert a.value(s, "trainvitals_jobs", state="running") == 4

    # GPUs: each job's share of each device, and the one Slurm gave the job.
    assert a.value(s, "trainvitals_gpu_job_memory_bytes", job=POD_A, gpu="0") == 3e9
    assert a.value(s, "trainvitals_gpu_job_memory_bytes", job=tree, gpu="0") == 1e9
    assert a.value(s, "trainvitals_gpu_job_memory_bytes", job=POD_B, gpu="1") == 5e9
    assert a.value(s, "trainvitals_gpu_job_sm_util_ratio", job=POD_A, gpu="0") == pytest.approx(0.6)
    assert a.value(s, "trainvitals_gpu_job_processes", job=SLURM_JOB, gpu="1") == 0
    assert a.value(s, "trainvitals_job_gpu_allocated", job=SLURM_JOB, gpu="1") == 1
    assert a.value(s, "trainvitals_job_gpu_allocated", job=POD_A, gpu="0") == 0
    assert a.value(s, "trainvitals_job_gpus_held", job=POD_A) == 1
    # The device series carry no job label.
    assert not [k for k in s if k[0].startswith("trainvitals_gpu_util") and
                any(l[0] == "job" for l in k[1])]

    # CPU and memory from each job's own cgroup, against psutil's view of its process.
    for name, job, mib in (("a", POD_A, 200), ("slurm", SLURM_JOB, 100)):
        p = psutil.Process(node[name])
        t0, c0 = time.monotonic(), sum(p.cpu_times()[:2])
        cores = []
        for _ in range(4):
            time.sleep(1)
            cores.append(a.value(a.series(), "trainvitals_job_cpu_cores", job=job))
        truth = (sum(p.cpu_times()[:2]) - c0) / (time.monotonic() - t0)
        got = sum(cores) / len(cores)
        assert abs(got - truth) <= 0.1 + 0.15 * truth, (name, cores, truth)
        s = a.series()
        rss = p.memory_info().rss
        memory = a.value(s, "trainvitals_job_memory_bytes", job=job)
        assert mib << 20 <= memory <= rss * 1.1 + (16 << 20), (name, memory, rss)
        assert a.value(s, "trainvitals_job_processes", job=job) == 1
    assert a.stop()[0] == 0


def test_an_ended_job_says_so_then_goes_and_the_cap_is_counted(agent, node):
    capped = agent("--max-jobs", "2")

    def dropped():
        s = capped.series()
        return s if capped.value(s, "trainvitals_jobs_dropped_total") else None

    s = wait_for(dropped, what="a dropped job")
    assert capped.value(s, "trainvitals_jobs", state="running") == 2
    assert capped.value(s, "trainvitals_jobs_dropped_total") == 2
    assert capped.stop()[0] == 0

    # A job whose processes are gone: running 0 at once, its series gone after --linger.
    a = agent("--linger", "3")
    pod = str(uuid.uuid4())
    path = f"/kubepods/besteffort/pod{pod}/{CID_B}"
    given = subprocess.Popen([*helper("in_cgroup.py"), *placed({"unified": path, "v1": path}),
                              "--", sys.executable, "-c", "import time; time.sleep(60)"],
                             env={**os.environ, "NVIDIA_VISIBLE_DEVICES": "0"})
    try:
        wait_for(lambda: a.value(a.series(), "trainvitals_job_running", job=pod) == 1,
                 what="a pod given GPU 0 served")
        s = a.series()
        assert a.value(s, "trainvitals_job_gpu_allocated", job=pod, gpu="0") == 1
        assert a.value(s, "trainvitals_gpu_job_processes", job=pod, gpu="0") == 0
    finally:
        given.kill()
        given.wait()
    def ended():
        s = a.series()
        return s if a.value(s, "trainvitals_job_running", job=pod) == 0 else None

    s = wait_for(ended, what="the ended pod said so")
    # It holds no GPU any more: no GPU-hours or waste counted for it while it lingers.
    assert a.value(s, "trainvitals_job_gpus_held", job=pod) == 0
    assert a.value(s, "trainvitals_job_gpu_allocated", job=pod) is None
    assert a.value(s, "trainvitals_gpu_job_processes", job=pod) is None
    wait_for(lambda: info_of(a, a.series(), pod) is None, what="the ended pod gone")
    assert a.value(a.series(), "trainvitals_job_running", job=POD_A) == 1
    assert a.stop()[0] == 0


def test_a_job_that_holds_a_gpu_and_never_computes_is_gpu_unused_and_healthy_jobs_get_nothing(
        agent, node, tmp_path):
    config = tmp_path / "serve.toml"
    config.write_text("[findings]\n" + "".join(f"{k} = {v}\n" for k, v in {
        "warmup_s": 2, "window_s": 4, "open_s": 2, "hold_s": 60, "gpu_idle_s": 4,
        "gpu_unused_s": 4, "low_gpu_util_window_s": 600, "stalled_s": 3,
        "slow_start_s": 4}.items()))
    a = agent("--config", str(config))

    def unused():
        s = a.series()
        return s if a.value(s, "trainvitals_finding_active", job=POD_B,
                            finding="gpu-unused") == 1 else None

    wait_for(unused, timeout=40, what="gpu-unused on the pod that holds GPU 1 idle")
    time.sleep(3)
    s = a.series()
    opened = {(dict(ls)["job"], dict(ls)["finding"]) for (n, ls), v in s.items()
              if n == "trainvitals_finding_active"}
    # Pod A and the tree share GPU 0, which the rule says; nothing else opens.
    tree = f"tree-{node['tree']}"
    assert opened == {(POD_B, "gpu-unused"), (POD_A, "shared-gpu"), (tree, "shared-gpu")}, opened
    assert a.value(s, "trainvitals_health_score", job=SLURM_JOB) == 100
    assert a.value(s, "trainvitals_health_score", job=POD_B) == 0
    code, err = a.stop()
    assert code == 0
    said = [l for l in err.splitlines() if "gpu-unused" in l]
    assert len(said) == 1 and f"job {POD_B}:" in said[0], err


def test_each_ended_job_is_a_run_in_the_history_that_says_who_wasted_gpu_hours(
        agent, node, tmp_path):
    # Two Slurm jobs of two users: alice's holds GPU 1 and never computes,
    # bob's keeps GPU 0 busy. Both end; the spool keeps each as a run.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CUDA_"))}
    jobs, procs = {"alice": str(int(SLURM_JOB) + 1), "bob": str(int(SLURM_JOB) + 2)}, {}
    roots = hierarchies()
    try:
        for user, job in jobs.items():
            cgroup = {"unified": f"/system.slice/slurmstepd.scope/job_{job}/step_0",
                      "v1": f"/slurm/uid_0/job_{job}/step_0"}
            procs[user] = subprocess.Popen(
                [*helper("in_cgroup.py"), *placed(cgroup), "--", *helper("job_work.py"), "20",
                 "0.1"],
                env={**base, "SLURM_JOB_ID": job, "SLURM_JOB_USER": user,
                     "SLURM_JOB_ACCOUNT": f"{user}-lab", "SLURM_JOB_PARTITION": "gpu"},
                stdout=subprocess.PIPE, text=True)
            assert procs[user].stdout.readline().strip() == "ready"
        gpus = tmp_path / "two-jobs.json"
        gpus.write_text(json.dumps({"devices": [
            {"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 95},
             "processes": [{"pid": procs["bob"].pid, "memory_bytes": 6e9, "sm_util": 95}]},
            {"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 0},
             "processes": [{"pid": procs["alice"].pid, "memory_bytes": 4e9, "sm_util": 0}]},
        ]}))
        config = tmp_path / "serve.toml"
        config.write_text("[findings]\nwarmup_s = 2\ngpu_unused_s = 4\ngpu_idle_s = 4\n"
                          "window_s = 4\nopen_s = 2\nslow_start_s = 4\n")
        spool = tmp_path / "spool"
        a = agent("--config", str(config), "--spool", str(spool), "--linger", "0", gpus=gpus)
        wait_for(lambda: a.value(a.series(), "trainvitals_finding_active", job=jobs["alice"],
                                 finding="gpu-unused") == 1,
                 timeout=40, what="gpu-unused on alice's job")
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        for root in roots.values():
            for job in jobs.values():
                remove_tree(os.path.join(root, f"system.slice/slurmstepd.scope/job_{job}"))
                remove_tree(os.path.join(root, f"slurm/uid_0/job_{job}"))

    def run_of(job):
        found = [d for d in spool.glob(f"*-slurm-{job}") if (d / "summary.json").exists()]
        return found[0] if found else None

    wait_for(lambda: run_of(jobs["alice"]) and run_of(jobs["bob"]), timeout=20,
             what="both ended jobs' summaries")
    assert a.stop()[0] == 0
    idle = run_of(jobs["alice"])
    meta = json.loads((idle / "meta.json").read_text())
    assert meta["mode"] == "serve" and meta["host"] == "node-1" and meta["user"] == "alice"
    assert meta["job"]["id"] == jobs["alice"] and meta["job"]["account"] == "alice-lab"
    assert [g["index"] for g in meta["gpus"]] == [1]
    summary = json.loads((idle / "summary.json").read_text())
    assert [f["id"] for f in summary["findings"]] == ["gpu-unused"]
    rows = (idle / "samples.jsonl").read_text().splitlines()
    assert summary["rows"] == len(rows) >= 4
    events = [json.loads(l) for l in (idle / "events.jsonl").read_text().splitlines()]
    assert ("finding_open", "gpu-unused") in {(e["type"], e.get("id")) for e in events}
    # Held for as long as it was served: the summary's GPU-hours are its rows'.
    assert summary["cost"]["gpu_hours"] == pytest.approx(
        summary["duration_s"] / 3600, rel=0.25)
    busy = json.loads((run_of(jobs["bob"]) / "summary.json").read_text())
    assert busy["findings"] == [], busy["findings"]

    # The history answers who wasted GPU-hours, and `report` reads a job's run.
    out = subprocess.run([cli_path(), "runs", "--db", str(spool / "runs.db"), "stats", "--by",
                          "user", "--json"], capture_output=True, text=True, check=True)
    groups = {g["user"]: g for g in json.loads(out.stdout)["groups"]}
    assert groups["alice"]["busy_ratio"] == pytest.approx(0, abs=0.01)
    assert groups["alice"]["wasted_gpu_hours"] == pytest.approx(
        groups["alice"]["gpu_hours"], rel=0.01)
    assert groups["alice"]["findings"] == [{"id": "gpu-unused", "runs": 1}]
    assert groups["bob"]["busy_ratio"] == pytest.approx(0.95, abs=0.05)
    assert groups["bob"]["findings"] == []
    text = subprocess.run([cli_path(), "runs", "--db", str(spool / "runs.db"), "stats", "--by",
                           "account"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^  alice-lab +1 ", text, re.M), text
    report = subprocess.run([cli_path(), "report", str(idle), "--out", str(tmp_path / "r.html")],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr


def test_a_training_session_in_a_job_is_served_under_that_job(agent, node, tmp_path):
    # `trainvitals run` of a PyTorch loop inside a Slurm job's cgroup: the agent
    # serves its steps, epoch, data wait and health under the job, from the
    # session's own announcement, with no second sampler.
    job = str(int(SLURM_JOB) + 3)
    cgroup = {"unified": f"/system.slice/slurmstepd.scope/job_{job}/step_0",
              "v1": f"/slurm/uid_0/job_{job}/step_0"}
    # As in a batch job, no runtime directory: the session announces itself in
    # /dev/shm/trainvitals-UID, one of the places the agent looks.
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "CUDA_")) and k != "XDG_RUNTIME_DIR"}
    a = agent()
    train = subprocess.Popen(
        [*helper("in_cgroup.py"), *placed(cgroup), "--", cli_path(), "run", "--out",
         str(tmp_path / "run"), "--", *helper("top_train.py"), "--seconds", "60"],
        env={**base, "SLURM_JOB_ID": job, "SLURM_JOB_USER": "carol"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The row in which a process's first steps show has no rate yet (a rate
        # takes two readings of its counter): the rows after it have both.
        def stepping():
            s = a.series()
            step = a.value(s, "trainvitals_training_step", job=job)
            rate = a.value(s, "trainvitals_training_steps_per_second", job=job)
            return s if step and step > 0 and rate is not None else None

        s = wait_for(stepping, timeout=40, what="the session's steps and their rate under its job")
        sessions = [dict(ls) for (n, ls), _ in s.items() if n == "trainvitals_job_session_info"
                    and ("job", job) in ls]
        assert len(sessions) == 1 and sessions[0]["run"] == "top_train", sessions
        assert sessions[0]["mode"] == "run"
        assert a.value(s, "trainvitals_training_steps_per_second", job=job) > 5
        assert a.value(s, "trainvitals_training_epoch", job=job) >= 0
        first = a.value(s, "trainvitals_training_step", job=job)
        wait_for(lambda: a.value(a.series(), "trainvitals_training_step", job=job) > first,
                 what="the steps going on")
        wait_for(lambda: a.value(a.series(), "trainvitals_health_score", job=job) is not None,
                 what="the job's health")
        # Another job's series carry no session.
        assert a.value(s, "trainvitals_training_step", job=SLURM_JOB) is None
        check = subprocess.run([need("promtool"), "check", "metrics"], input=a.text(),
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        train.terminate()  # run passes it to the training, which ends
        train.wait(timeout=30)
        for root in hierarchies().values():
            remove_tree(os.path.join(root, f"system.slice/slurmstepd.scope/job_{job}"))
            remove_tree(os.path.join(root, f"slurm/uid_0/job_{job}"))
    assert a.stop()[0] == 0


def test_prometheus_answers_the_fleets_questions_with_the_shipped_rules(agent, node, tmp_path):
    a = agent()
    wait_for(lambda: all(info_of(a, a.series(), j) for j in (POD_A, POD_B, SLURM_JOB)),
             what="the jobs served")
    shipped = pathlib.Path(__file__).resolve().parents[2] / "deploy/prometheus/serve_rules.yml"
    rules = tmp_path / "serve_rules.yml"  # evaluated each second here, not each minute
    rules.write_text(shipped.read_text().replace("interval: 1m", "interval: 1s"))
    # As deploy/prometheus/prometheus.yml scrapes it: the job label is the cluster's job.
    prom = start_prometheus(tmp_path, [f"127.0.0.1:{a.port}"], rule_files=[rules],
                            honor_labels=True)
    try:
        def answer(expr):
            result = query(prom.url, expr)["data"]["result"]
            return {r["metric"].get("job", r["metric"].get("user")): float(r["value"][1])
                    for r in result}

        busy = wait_for(lambda: answer("trainvitals:job_gpus_busy"), what="the busy rule")
        s = a.series()
        gpu0 = (a.value(s, "trainvitals_gpu_sm_active_ratio", gpu="0")
                or a.value(s, "trainvitals_gpu_util_ratio", gpu="0"))
        assert busy[POD_A] == pytest.approx(gpu0, abs=0.05), busy
        assert busy[POD_B] == 0 and busy[SLURM_JOB] == 0, busy
        wasted = answer("trainvitals:job_gpus_wasted")
        assert wasted[POD_B] == 1 and wasted[SLURM_JOB] == 1, wasted
        assert answer('trainvitals:user_gpus_held{user="alice"}') == {"alice": 1}
        # docs/cluster.md's query for the jobs that hold GPUs at under 30 % busy.
        low = answer("avg by (host, job) (avg_over_time(trainvitals_gpu_util_ratio[1m]) "
                     "* on (host, gpu, mig) group_right () "
                     "(trainvitals_job_gpu_allocated * 0 + 1)) < 0.3")
        assert set(low) == {POD_B, SLURM_JOB}, low

        # Every query of the fleet dashboard runs; each panel shows something
        # but the findings' and health's, which wait for the default warm-up.
        dash = json.loads((ROOT / "deploy/grafana/trainvitals-fleet.json").read_text())
        def result(expr):
            answer = query(prom.url, expr)
            assert answer["status"] == "success", (expr, answer)
            return answer["data"]["result"]

        variables = [as_promql(v["query"]) for v in dash["templating"]["list"]
                     if v["type"] == "query"]
        assert all(result(e) for e in variables), variables
        empty = []
        for panel in dash["panels"]:
            exprs = [t["expr"].replace("$node", ".*").replace("$user", ".*")
                     for t in panel["targets"]]
            assert not [e for e in exprs if "$" in e], exprs
            if not any(result(e) for e in exprs):
                empty.append(panel["title"])
        assert set(empty) <= {"Jobs with a finding open", "Health per job"}, empty
    finally:
        prom.stop()
    assert a.stop()[0] == 0


def test_the_shipped_serve_rules_pass_promtool():
    rules = pathlib.Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
    for args in (["check", "rules", "serve_rules.yml"], ["test", "rules", "serve_rules_test.yml"],
                 ["check", "config", "prometheus.yml"]):
        r = subprocess.run([need("promtool"), *args], cwd=rules, capture_output=True, text=True)
        assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def test_the_systemd_unit_is_valid_and_starts_this_agent(tmp_path):
    shipped = pathlib.Path(__file__).resolve().parents[2] / "deploy/systemd/trainvitals-serve.service"
    text = shipped.read_text()
    assert ("ExecStart=/usr/local/bin/trainvitals serve --listen :9402 --spool "
            "/var/lib/trainvitals/jobs --db /var/lib/trainvitals/runs.db\n") in text
    unit = tmp_path / "trainvitals-serve.service"
    unit.write_text(text.replace("/usr/local/bin/trainvitals", cli_path()))
    r = subprocess.run([need("systemd-analyze"), "verify", str(unit)], capture_output=True,
                       text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
