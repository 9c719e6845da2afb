"""`trainvitals run` puts the job in a cgroup of its own where the machine lets
it, reads the job's CPU, memory split and pressure from it, and removes it when
the job ends. The job's CPU then counts children that lived between two
samples as wait4 sees them; PSI says when the job waits for a CPU."""
import os
import re
import sys

import pytest

from conftest import cpu_seconds, helper

SHOW = [sys.executable, "-c",
        "import time; print(open('/proc/self/cgroup').read(), flush=True); time.sleep(1.5)"]


def _own_cgroup_or_skip(r):
    """The job's cgroup lines, or a skip naming why this machine gives it none."""
    for e in r.events:
        if e["type"] == "source_unavailable" and e["source"] == "job_cgroup":
            pytest.skip(f"no cgroup of the job's own here: {e['message']}")
    return r


def test_the_job_is_alone_in_a_cgroup_that_goes_when_it_ends(run_tv):
    r = _own_cgroup_or_skip(run_tv(SHOW))
    assert r.proc.returncode == 0, r.proc.stderr
    lines = [l for l in r.proc.stdout.splitlines() if l]
    own = [l for l in lines if re.search(r"/trainvitals-\d+$", l)]
    # The unified hierarchy and, where mounted, v1 cpuacct and memory: one name in each.
    assert any(l.startswith("0::") for l in own) or any(":memory:" in l for l in own), lines
    names = {re.search(r"trainvitals-(\d+)$", l).group(1) for l in own}
    assert len(names) == 1, own
    pid = names.pop()
    with open("/proc/self/cgroup") as f:
        assert f"trainvitals-{pid}" not in f.read()  # the test itself was never moved
    left = [d for d, _, _ in os.walk("/sys/fs/cgroup") if d.endswith(f"/trainvitals-{pid}")]
    assert left == [], left  # removed when the job ended
    jobs = [row["job"] for row in r.rows]
    assert any("memory_anon_bytes" in j and "process_files_age_seconds" in j for j in jobs), jobs


def test_cpu_of_children_between_samples_matches_their_rusage_within_2_percent(run_tv):
    r = _own_cgroup_or_skip(run_tv([*helper("rusage_children.py"), "4", "0.03"], timeout=120))
    assert r.proc.returncode == 0, r.proc.stderr
    words = r.proc.stdout.split()
    truth = float(words[words.index("rusage_cpu_s") + 1])
    assert int(words[words.index("children") + 1]) >= 40, r.proc.stdout
    got = cpu_seconds(r.rows)
    assert abs(got - truth) <= 0.02 * truth, (got, truth)


def test_pressure_says_when_the_job_waits_for_a_cpu_and_not_when_it_sleeps(run_tv):
    n = 2 * (os.cpu_count() or 1)
    busy = ("import multiprocessing as m, time\n"
            "def burn():\n  e = time.time() + 4\n  while time.time() < e: pass\n"
            f"ps = [m.Process(target=burn) for _ in range({n})]\n"
            "[p.start() for p in ps]; [p.join() for p in ps]\n")
    r = _own_cgroup_or_skip(run_tv([sys.executable, "-c", busy], name="busy"))
    assert r.proc.returncode == 0, r.proc.stderr
    rows = [row["job"] for row in r.rows if 1.5 <= row["elapsed_s"] <= 4.0]
    if not any("cpu_pressure_ratio" in j for j in rows):
        pytest.skip("no PSI in this kernel (no cpu.pressure)")
    waits = [j["cpu_pressure_ratio"] for j in rows]
    assert min(waits) >= 0.5, waits  # twice the processes of the cores: always one waiting
    r = run_tv(["sleep", "3"], name="sleeping")
    waits = [row["job"]["cpu_pressure_ratio"] for row in r.rows if "cpu_pressure_ratio" in row["job"]]
    assert waits and max(waits) <= 0.05, waits
