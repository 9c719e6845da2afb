"""`trainvitals serve` on a real Slurm: Debian's munged, slurmctld and slurmd
started by the test (slurm_services.py), two batch jobs of two users at once on
two (fake) GPUs given by GRES. The agent attributes each GPU process, its
memory and its GPU to the right job and user; the ended jobs are runs in the
history with their findings; the shipped epilog (deploy/slurm/epilog.sh)
appends each job's summary to its output file."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT, cli_path
from prom_services import free_port, http_get, wait_for
from slurm_services import require_slurm, start_slurm
from test_gpus import FAKE

# A GPU job: writes its PID where the fake driver reads it, holds MIB of memory
# and burns about a fifth of a core for SECONDS.
JOB = """#!/bin/sh
exec /usr/bin/python3 -c '
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
block = bytearray(int(sys.argv[2]) << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
end = time.time() + float(sys.argv[3])
while time.time() < end:
    t = time.time() + 0.02
    while time.time() < t:
        pass
    time.sleep(0.08)
' {pidfile} 64 {seconds}
"""


def series(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
        if m:
            out[(m.group(1), frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(2))))] = float(
                m.group(3))
    return out


def value(s, name, **labels):
    for (n, ls), v in s.items():
        if n == name and set(labels.items()) <= ls:
            return v
    return None


@pytest.fixture
def shared():
    """World-writable, as a shared scratch: the job of `nobody` writes here too."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="tv-slurm-"))
    d.chmod(0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_serve_knows_each_slurm_job_its_user_and_gpu_and_the_epilog_says_how_it_went(
        tmp_path, shared):
    require_slurm()
    spool = tmp_path / "spool"
    gpus = tmp_path / "gpus.json"
    gpus.write_text(json.dumps({"devices": [
        {"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 90},
         "processes": [{"pid": f"@{shared}/busy.pid", "memory_bytes": 6e9, "sm_util": 90}]},
        {"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 0},
         "processes": [{"pid": f"@{shared}/idle.pid", "memory_bytes": 4e9, "sm_util": 0}]},
    ]}))
    config = tmp_path / "serve.toml"
    config.write_text("[findings]\nwarmup_s = 2\ngpu_unused_s = 4\ngpu_idle_s = 4\n"
                      "window_s = 4\nopen_s = 2\nslow_start_s = 4\n")
    epilog = (f"TRAINVITALS={cli_path()} TRAINVITALS_DB={spool}/runs.db TRAINVITALS_WAIT=20 "
              f"exec {ROOT}/deploy/slurm/epilog.sh\n")
    cluster = start_slurm(tmp_path, epilog=epilog, gpu_files=("/dev/null", "/dev/zero"),
                          task_cgroup=True)
    port = free_port()
    agent = subprocess.Popen(
        [cli_path(), "serve", "--listen", f"127.0.0.1:{port}", "--node", "node-1",
         "--config", str(config), "--spool", str(spool), "--linger", "0"],
        env={**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
             "FAKE_NVML_SCENARIO": str(gpus)},
        stderr=subprocess.PIPE, text=True)
    try:
        busy = cluster.sbatch(JOB.format(pidfile=shared / "busy.pid", seconds=14),
                              gres="gpu:1", account="vision", output=f"{shared}/job-%j.out")
        idle = cluster.sbatch(JOB.format(pidfile=shared / "idle.pid", seconds=14),
                              gres="gpu:1", uid="nobody", output=f"{shared}/job-%j.out")

        def both():
            s = series(http_get(f"http://127.0.0.1:{port}/metrics")[2])
            have = [value(s, "trainvitals_gpu_job_memory_bytes", job=j) for j in (busy, idle)]
            unused = value(s, "trainvitals_finding_active", job=idle, finding="gpu-unused")
            return s if all(have) and unused == 1 else None

        s = wait_for(both, timeout=40, what="both Slurm jobs served, gpu-unused on the idle one")
        info = {j: dict(ls) for (n, ls), _ in s.items() if n == "trainvitals_job_info"
                for j in (busy, idle) if ("job", j) in ls}
        assert info[busy]["kind"] == "slurm" and info[busy]["user"] == "root"
        assert info[busy]["account"] == "vision" and info[busy]["partition"] == "gpu"
        assert info[idle]["user"] == "nobody"
        # Each job's GPU process on the GPU Slurm gave it, found from its cgroup.
        assert value(s, "trainvitals_gpu_job_memory_bytes", job=busy, gpu="0") == 6e9
        assert value(s, "trainvitals_gpu_job_memory_bytes", job=idle, gpu="1") == 4e9
        assert value(s, "trainvitals_gpu_job_memory_bytes", job=busy, gpu="1") is None
        allocated = {j: [g for g in ("0", "1") if value(s, "trainvitals_job_gpu_allocated",
                                                        job=j, gpu=g) == 1] for j in (busy, idle)}
        assert sorted(allocated[busy] + allocated[idle]) == ["0", "1"], allocated
        # Its memory and CPU from its own cgroups (task/cgroup, jobacct_gather/cgroup): the
        # 64 MiB it holds, not the node's, and about the fifth of a core it burns.
        for j in (busy, idle):
            memory = value(s, "trainvitals_job_memory_bytes", job=j)
            assert 64 << 20 <= memory <= 512 << 20, (j, memory)
            cores = value(s, "trainvitals_job_cpu_cores", job=j)
            assert cores is not None and 0.05 <= cores <= 0.6, (j, cores)
        assert value(s, "trainvitals_finding_active", job=busy) is None

        states = {j: cluster.wait_done(j, timeout=60) for j in (busy, idle)}
        assert states == {busy: "COMPLETED", idle: "COMPLETED"}, cluster._logs()
    finally:
        agent.terminate()
        _, err = agent.communicate(timeout=30)
        cluster.stop()
    print(err, file=sys.stderr)

    # The ended jobs are runs in the history, with their owners and findings.
    out = subprocess.run([cli_path(), "runs", "--db", str(spool / "runs.db"), "stats", "--by",
                          "user", "--json"], capture_output=True, text=True, check=True)
    groups = {g["user"]: g for g in json.loads(out.stdout)["groups"]}
    assert groups["nobody"]["findings"] == [{"id": "gpu-unused", "runs": 1}], groups
    assert groups["nobody"]["busy_ratio"] == pytest.approx(0, abs=0.01)
    assert groups["root"]["findings"] == [], groups
    assert groups["root"]["busy_ratio"] == pytest.approx(0.9, abs=0.05)

    # The epilog appended each job's summary to its output, as its owner.
    idle_out = (shared / f"job-{idle}.out").read_text()
    assert re.search(rf"^trainvitals: slurm job {idle} \(script-\d+\.sh\) — ended after", idle_out,
                     re.M), idle_out
    assert re.search(r"^    gpu-unused \[\w+\] GPU 1: .*\n      → ", idle_out, re.M), idle_out
    busy_out = (shared / f"job-{busy}.out").read_text()
    assert f"trainvitals: slurm job {busy} " in busy_out and "Findings none" in busy_out, busy_out
    assert os.stat(shared / f"job-{idle}.out").st_uid == 65534
