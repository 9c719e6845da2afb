"""`trainvitals run` puts the job in a cgroup of its own where the machine lets
it, reads the job's CPU, memory split and pressure from it, and removes it when
the job ends. The job's CPU then counts children that lived between two
samples as wait4 sees them; PSI says when the job waits for a CPU."""
import ctypes
import errno
import os
import re
import signal
import subprocess
import sys
import time

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


def _without_clone3():
    """In the child before exec: clone3 fails with ENOSYS from here on, as under
    a container runtime's older seccomp profile (a filter: nr 435 -> ENOSYS)."""
    libc = ctypes.CDLL(None, use_errno=True)

    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]

    insns = (Insn * 4)(Insn(0x20, 0, 0, 0),           # load the syscall's number
                       Insn(0x15, 0, 1, 435),         # clone3?
                       Insn(0x06, 0, 0, 0x00050000 | errno.ENOSYS),
                       Insn(0x06, 0, 0, 0x7FFF0000))  # every other: allowed
    prog = Prog(4, insns)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        os._exit(99)  # PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP(SECCOMP_MODE_FILTER)


def _expected_hierarchies():
    """The hierarchies the job's cgroup goes in: unified, v1 cpuacct, v1 memory."""
    with open("/proc/self/mountinfo") as f:
        fs = [l.split(" - ")[1].split() for l in f if " - cgroup" in l]
    kinds = {"0::"} if any(t == "cgroup2" for t, *_ in fs) else set()
    for name in ("cpuacct", "memory"):
        if any(t == "cgroup" and name in opts.split(",") for t, _, opts in fs):
            kinds.add(name)
    return kinds


def _directory(line):
    """The directory of a /proc/PID/cgroup line, under its hierarchy's mount."""
    kind = _hierarchy(line)
    with open("/proc/self/mountinfo") as f:
        for mount in f:
            fields, (fstype, _, opts) = mount.split(" - ")[0].split(), mount.split(" - ")[1].split()
            if (kind == "0::" and fstype == "cgroup2") or (
                    fstype == "cgroup" and kind in opts.split(",")):
                return fields[4] + line.split(":", 2)[2]
    return None


def _hierarchy(line):
    """"0::", "cpuacct" or "memory" for a /proc/PID/cgroup line, else None."""
    if line.startswith("0::"):
        return "0::"
    controllers = line.split(":")[1].split(",")
    return next((k for k in ("cpuacct", "memory") if k in controllers), None)


@pytest.mark.parametrize("clone3", [True, False], ids=["made-in-it", "clone3-refused"])
def test_the_job_is_alone_in_a_cgroup_that_goes_when_it_ends(run_tv, clone3):
    r = _own_cgroup_or_skip(run_tv(SHOW, preexec_fn=None if clone3 else _without_clone3))
    assert r.proc.returncode == 0, r.proc.stderr
    lines = [l for l in r.proc.stdout.splitlines() if l]
    own = [l for l in lines if re.search(r"/trainvitals-\d+$", l)]
    # The unified hierarchy and, where mounted, v1 cpuacct and memory: one name in
    # each, whether the job was made in the v2 one (clone3) or entered it by write.
    kinds = {_hierarchy(l) for l in own} - {None}
    assert kinds == _expected_hierarchies(), lines
    names = {re.search(r"trainvitals-(\d+)$", l).group(1) for l in own}
    assert len(names) == 1, own
    pid = names.pop()
    with open("/proc/self/cgroup") as f:
        assert f"trainvitals-{pid}" not in f.read()  # the test itself was never moved
    # Removed when the job ended. (Those of a run killed with SIGKILL stay, and
    # may carry the same process number after the numbers wrapped: these are
    # the job's own.)
    left = [d for d in map(_directory, own) if d and os.path.isdir(d)]
    assert len(left) == 0 and len({_directory(l) for l in own} - {None}) == len(own), (
        left, own, r.proc.stderr)
    jobs = [row["job"] for row in r.rows]
    assert any("memory_anon_bytes" in j and "process_files_age_seconds" in j for j in jobs), jobs


def _gone(pid, timeout=10):
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")


def test_the_cgroups_a_run_killed_with_sigkill_left_go_at_a_later_runs_end(tv, run_tv, tmp_path):
    job = [sys.executable, "-c", "import os, time; print(os.getpid()); "
           "print(open('/proc/self/cgroup').read(), flush=True); time.sleep(120)"]
    killed = subprocess.Popen([tv, "run", "--quiet", "--out", str(tmp_path / "killed"), "--", *job],
                              stdout=subprocess.PIPE, text=True)
    job_pid = int(killed.stdout.readline())
    try:
        own = [l.strip() for l in iter(killed.stdout.readline, "\n")
               if re.search(r"/trainvitals-\d+$", l.strip())]
        if not own:
            pytest.skip("no cgroup of the job's own here")
        dirs = [_directory(l) for l in own]
        killed.kill()
        killed.wait()

        then = time.time() - 120  # as if they were made two minutes ago
        for d in dirs:
            os.utime(d, (then, then))
        # Its job lives on in them: they stay.
        assert run_tv(["true"]).proc.returncode == 0
        assert all(os.path.isdir(d) for d in dirs), dirs
        os.kill(job_pid, signal.SIGKILL)
        assert _gone(job_pid)
        # Made over a minute ago, empty now, their run gone: a later run's end removes them.
        assert run_tv(["true"], name="later").proc.returncode == 0
        assert not [d for d in dirs if os.path.isdir(d)], dirs
    finally:
        killed.kill()
        if os.path.exists(f"/proc/{job_pid}"):
            os.kill(job_pid, signal.SIGKILL)


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
