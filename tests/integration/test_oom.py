"""A job that dies of memory says so in its run directory: the kernel's OOM
killer in the job's own cgroup (v1 memory cgroup with a limit the job puts
itself under), a SIGKILL at the job's memory limit, and PyTorch's
OutOfMemoryError raised in a loop under `trainvitals.torch.monitor()` (alone
and under `run`) each give an `oom` event and the critical `oom` finding, with
the last minutes of memory figures; `trainvitals analyze` reaches the same
verdict from the files. Healthy endings (a normal exit, a SIGKILL far below the
limit, a non-memory exception) get none."""
import json
import os
import pathlib
import shlex
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from conftest import HELPERS, ROOT, Run, cli_path
from schema import check_run_dir

MIB = 1 << 20
LIMIT = 200 * MIB
MEMORY_V1 = pathlib.Path("/sys/fs/cgroup/memory")
PY_ENV = {"PYTHONPATH": str(ROOT / "python")}


def run(tmp_path, command, name="run", timeout=180):
    out = tmp_path / name
    env = {**os.environ, **PY_ENV}
    env.pop("TRAINVITALS_CONFIG", None)
    env["TRAINVITALS_NVML_LIBRARY"] = str(tmp_path / "no-such-libnvidia-ml.so.1")
    args = [cli_path(), "run", "--interval", "0.5", "--out", str(out), "--", *command]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    check_run_dir(out)
    return Run(proc, out)


def ooms(r):
    return [f for f in r.summary["findings"] if f["id"] == "oom"]


def analyze(out):
    proc = subprocess.run([cli_path(), "analyze", str(out), "--json"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def assert_replayed_alike(r):
    replayed = analyze(r.out)
    assert replayed["ended"] is True
    assert replayed["findings"] == r.summary["findings"]


@pytest.fixture
def memory_cgroup():
    """A fresh v1 memory cgroup limited to 200 MiB; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("making a memory cgroup needs root")
    if not (MEMORY_V1 / "cgroup.procs").exists():
        pytest.skip(f"no cgroup v1 memory hierarchy at {MEMORY_V1}")
    path = MEMORY_V1 / f"trainvitals-test-{uuid.uuid4().hex[:8]}"
    try:
        path.mkdir()
        (path / "memory.limit_in_bytes").write_text(str(LIMIT))
    except OSError as e:
        if path.exists():
            path.rmdir()
        pytest.skip(f"cannot make a memory cgroup with a limit under {MEMORY_V1}: {e}")
    yield path
    for pid in (path / "cgroup.procs").read_text().split():
        try:
            os.kill(int(pid), 9)  # only the test's own job can be in it
        except ProcessLookupError:
            pass
    for _ in range(50):
        try:
            path.rmdir()
            break
        except OSError:  # the killed processes are still being reaped
            time.sleep(0.1)


def in_cgroup(cgroup, *args):
    """The job's root process moves itself into `cgroup`, then runs the helper."""
    grow = [sys.executable, str(HELPERS / "memory_grow.py"), *map(str, args)]
    return ["sh", "-c", f"echo $$ > {cgroup}/cgroup.procs && exec {shlex.join(grow)}"]


def test_the_kernels_oom_killer_in_the_jobs_own_cgroup_is_oom(tmp_path, memory_cgroup):
    r = run(tmp_path, in_cgroup(memory_cgroup))
    assert r.proc.returncode == 137, r.proc.stderr
    kills = [e for e in r.events if e["type"] == "oom_kill"]
    assert len(kills) == 1, r.events
    assert kills[0]["count"] >= 1
    assert kills[0]["cgroup"] == str(memory_cgroup)
    oom_events = [e for e in r.events if e["type"] == "oom"]
    assert len(oom_events) == 1
    assert oom_events[0]["killed_by"] == "oom_kill"
    opened = [e for e in r.events if e["type"] == "finding_open" and e["id"] == "oom"]
    assert len(opened) == 1
    [oom] = ooms(r)
    assert oom["severity"] == "critical"
    ev = oom["evidence"]
    assert ev["killed_by"] == "oom_kill" and ev["cgroup"] == str(memory_cgroup)
    # The source followed the job into its cgroup: the limit is the one it set.
    assert ev["memory_limit_bytes"] == LIMIT
    assert 0.7 * LIMIT < ev["job_memory_bytes_peak"] <= 1.02 * LIMIT
    points = ev["memory"]
    assert 10 <= len(points) <= 30
    assert points[-1]["t"] == r.rows[-1]["t"]
    assert points[-1]["t"] - points[0]["t"] <= 300
    assert max(p.get("job_memory_bytes", 0) for p in points) == ev["job_memory_bytes_peak"]
    assert all(p["memory_limit_bytes"] == LIMIT for p in points[len(points) // 2:])
    assert "OOM killer" in oom["message"] and str(memory_cgroup) in oom["message"]
    assert "OOM killer" in r.proc.stderr  # the summary printed at the end says so
    assert r.summary["findings"][0]["id"] == "oom"  # critical: the worst first
    assert_replayed_alike(r)


def test_sigkill_at_the_memory_limit_is_oom(tmp_path, memory_cgroup):
    r = run(tmp_path, in_cgroup(memory_cgroup, "--kill-at", 0.97, "--hold", 2))
    assert r.proc.returncode == 137, r.proc.stderr
    assert [e for e in r.events if e["type"] == "oom_kill"] == []  # not the kernel's doing
    [oom] = ooms(r)
    assert oom["evidence"]["killed_by"] == "sigkill_at_limit"
    assert oom["evidence"]["signal"] == 9
    assert oom["evidence"]["limit_ratio"] >= 0.95
    assert "SIGKILL" in oom["message"]
    assert_replayed_alike(r)


def test_sigkill_far_below_the_limit_and_a_normal_exit_are_no_oom(tmp_path):
    killed = run(tmp_path, [sys.executable, "-c",
                            "import os, time; b = b'x' * (20 << 20); time.sleep(3); "
                            "os.kill(os.getpid(), 9)"], name="killed")
    assert killed.proc.returncode == 137
    fine = run(tmp_path, [sys.executable, "-c", "import time; time.sleep(3)"], name="fine")
    assert fine.proc.returncode == 0
    for r in (killed, fine):
        assert ooms(r) == []
        assert [e["type"] for e in r.events if e["type"] in ("oom", "oom_kill")] == []
        assert [f for f in analyze(r.out)["findings"] if f["id"] == "oom"] == []


LOOP = """
import sys, time
import torch
import trainvitals.torch

model = torch.nn.Linear(64, 64)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
with trainvitals.torch.monitor({options}) as m:
    for step in range(40):
        x = torch.randn(32, 64)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        m.step()
        time.sleep(0.05)
        if step == 30 and sys.argv[1] == "oom":  # as the CUDA caching allocator raises it
            raise torch.cuda.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
                "capacity; 77.80 GiB already allocated)")
        if step == 30 and sys.argv[1] == "value":
            raise ValueError("the loss went NaN at step 30")
"""


def torch_loop(tmp_path, how, alone):
    options = f"out={str(tmp_path / 'alone')!r}, interval=0.5" if alone else ""
    script = tmp_path / "loop.py"
    script.write_text(textwrap.dedent(LOOP.format(options=options)))
    return [sys.executable, str(script), how]


def test_pytorch_out_of_memory_error_alone_is_oom(tmp_path):
    env = {**os.environ, **PY_ENV}
    env.pop("TRAINVITALS_SOCKET", None)
    env["TRAINVITALS_NVML_LIBRARY"] = str(tmp_path / "no-such-libnvidia-ml.so.1")
    proc = subprocess.run(torch_loop(tmp_path, "oom", alone=True), capture_output=True,
                          text=True, timeout=180, env=env)
    assert proc.returncode == 1
    assert "torch.cuda.OutOfMemoryError" in proc.stderr  # the script's own traceback
    out = tmp_path / "alone"
    check_run_dir(out)
    r = Run(proc, out)
    [oom] = ooms(r)
    assert oom["severity"] == "critical"
    assert oom["evidence"]["killed_by"] == "exception"
    assert oom["evidence"]["exception"] == "OutOfMemoryError"
    assert oom["evidence"]["exception_message"].startswith("CUDA out of memory.")
    assert oom["subject"]["pid"] == oom["evidence"]["pid"]
    assert oom["evidence"]["memory"]
    assert r.summary["exception"]["type"] == "OutOfMemoryError"
    assert [e["killed_by"] for e in r.events if e["type"] == "oom"] == ["exception"]
    assert "out of memory" in proc.stderr  # the summary printed at the end
    assert_replayed_alike(r)


def test_pytorch_out_of_memory_error_under_run_is_oom(tmp_path):
    r = run(tmp_path, torch_loop(tmp_path, "oom", alone=False))
    assert r.proc.returncode == 1, r.proc.stderr
    [oom] = ooms(r)
    assert oom["evidence"]["killed_by"] == "exception"
    assert oom["evidence"]["exception"] == "OutOfMemoryError"
    client_end = [e for e in r.events if e["type"] == "client_end"]
    assert client_end and client_end[0]["exception"] == "OutOfMemoryError"
    assert oom["subject"]["pid"] == client_end[0]["pid"]
    assert_replayed_alike(r)


@pytest.mark.parametrize("how", ["value", "fine"])
def test_a_pytorch_loop_ending_otherwise_is_no_oom(tmp_path, how):
    r = run(tmp_path, torch_loop(tmp_path, how, alone=False))
    assert r.proc.returncode == (1 if how == "value" else 0), r.proc.stderr
    assert ooms(r) == []
    assert [e for e in r.events if e["type"] == "oom"] == []
    if how == "value":
        assert r.summary["exception"]["type"] == "ValueError"
