"""The GPU lock directory on a shared machine, attacked by another local user
(`other_user`) while root runs `run --gpus auto:N` and `pick`: nothing planted
there makes a run write, chmod or truncate a file, hang, or name a holder the
kernel does not; a run killed with SIGKILL leaves its GPU held by its job."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import pathlib
import time

import pytest

from conftest import ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"


def gpus(n, **extra):
    return {"devices": [{"uuid": f"GPU-lk-{i}", "series": {"util_gpu": 0}, **extra}
                        for i in range(n)]}


@pytest.fixture
def shared(other_user):
    """A base directory shared as /tmp is, a scenario writer and the environment."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="tv-locks-", dir="/tmp"))
    base.chmod(0o1777)

    class Shared:
        user = other_user
        root = base
        locks = base / "locks"

        def env(self, scenario):
            path = base / "scenario.json"
            path.write_text(json.dumps(scenario))
            path.chmod(0o644)
            return {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
                    "FAKE_NVML_SCENARIO": str(path), "TRAINVITALS_LOCK_DIR": str(self.locks)}

        def make_locks_dir(self):
            self.locks.mkdir()
            self.locks.chmod(0o1777)  # as root, as an admin's `install -d -m 1777` makes it

        def lock(self, i):
            return self.locks / f"gpu-GPU-lk-{i}.lock"

        def plant(self, *args):
            made = other_user.run(args, capture_output=True, text=True)
            assert made.returncode == 0, made.stderr

    yield Shared()
    shutil.rmtree(base, ignore_errors=True)


def tv(args, env, timeout=30):
    return subprocess.run([cli_path(), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def run_args(tmp_path, gpu_count, *command):
    return ["run", "--quiet", "--gpus", f"auto:{gpu_count}", "--out", str(tmp_path / "run"),
            "--", *command]


def test_a_symlinked_lock_file_is_never_followed(shared, tmp_path):
    shared.make_locks_dir()
    precious = shared.root / "precious"  # root's file, as /etc/shadow
    precious.write_text("root:secret\n")
    precious.chmod(0o600)
    for i in range(2):
        shared.plant("ln", "-s", str(precious), str(shared.lock(i)))
    env = shared.env(gpus(3))
    seen = tmp_path / "seen"
    proc = tv(run_args(tmp_path, 1, "sh", "-c", f"echo $CUDA_VISIBLE_DEVICES > {seen}"), env)
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text().strip() == "2"  # the one GPU whose lock is a lock file
    for i in range(2):
        assert (f"trainvitals: --gpus auto:1: skipped GPU {i} unusable lock file "
                f"{shared.lock(i)}: a symbolic link to {precious}, owned by tv-neighbour; "
                f"never followed") in proc.stderr, proc.stderr
    proc = tv(run_args(tmp_path, 3, "true"), env)
    assert proc.returncode == 2
    assert "only 1 GPU free: GPU 0 unusable lock file" in proc.stderr, proc.stderr
    listed = tv(["pick", "3"], env)
    assert listed.returncode == 1
    assert any(l.startswith("  GPU 1: unusable lock file") and "a symbolic link" in l
               for l in listed.stderr.splitlines()), listed.stderr
    # The target kept its mode and its content.
    assert precious.stat().st_mode & 0o7777 == 0o600
    assert precious.read_text() == "root:secret\n"
    assert all(os.path.islink(shared.lock(i)) for i in range(2))


def test_a_lock_directory_made_by_another_user_is_refused(shared, tmp_path):
    shared.plant("mkdir", "-m", "1777", str(shared.locks))
    env = shared.env(gpus(1))
    proc = tv(run_args(tmp_path, 1, "true"), env)
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        f"trainvitals: --gpus auto:1: the lock directory {shared.locks} is owned by "
        "tv-neighbour, not by root or you"), proc.stderr
    assert f"install -d -m 1777 -o root -g root {shared.locks}" in proc.stderr
    assert "TRAINVITALS_LOCK_DIR" in proc.stderr
    assert not (tmp_path / "run").exists()  # refused before COMMAND starts
    assert list(shared.locks.iterdir()) == []
    listed = tv(["pick"], env)  # pick still picks, and says why it cannot see the locks
    assert listed.returncode == 0
    assert "is owned by tv-neighbour" in listed.stderr


def test_a_fifo_lock_file_hangs_nothing(shared, tmp_path):
    shared.make_locks_dir()
    shared.plant("mkfifo", "-m", "666", str(shared.lock(0)))
    env = shared.env(gpus(1))
    start = time.monotonic()
    listed = tv(["pick"], env, timeout=15)
    assert listed.returncode == 1
    assert (f"  GPU 0: unusable lock file {shared.lock(0)}: a FIFO, not a regular file, "
            "owned by tv-neighbour") in listed.stderr.splitlines(), listed.stderr
    proc = tv(run_args(tmp_path, 1, "true"), env, timeout=15)
    assert proc.returncode == 2
    assert "GPU 0 unusable lock file" in proc.stderr and "a FIFO" in proc.stderr, proc.stderr
    assert time.monotonic() - start < 15


def test_pick_ends_on_sigterm_wherever_it_waits(shared):
    # A driver call that never returns stands for anything pick could wait on.
    env = shared.env(gpus(1, hang={"nvmlDeviceGetMemoryInfo_v2": 0,
                                   "nvmlDeviceGetMemoryInfo": 0,
                                   "nvmlDeviceGetUtilizationRates": 0}))
    pick = subprocess.Popen([cli_path(), "pick"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            pick.wait(timeout=1.5)  # it does wait there
        pick.send_signal(signal.SIGTERM)
        assert pick.wait(timeout=5) == -signal.SIGTERM
    finally:
        pick.kill()
        pick.wait()


def test_the_holder_is_what_the_kernel_says_not_the_files_text(shared, tmp_path):
    shared.make_locks_dir()
    path = shared.lock(0)
    holder = shared.user.popen(
        ["/usr/bin/python3", "-c",
         "import fcntl, sys, time\n"
         f"f = open({str(path)!r}, 'w'); f.write('1\\n'); f.flush()\n"
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert path.read_text() == "1\n"
        comm = pathlib.Path(f"/proc/{holder.pid}/comm").read_text().strip()
        env = shared.env(gpus(1))
        expected = f"held by pid {holder.pid} ({comm}), lock file of tv-neighbour"
        listed = tv(["pick", "--json"], env)
        [gpu] = json.loads(listed.stdout)["gpus"]
        assert gpu["held_by"] == expected and gpu["held_by_pid"] == holder.pid
        proc = tv(run_args(tmp_path, 1, "true"), env)
        assert proc.returncode == 2
        assert f"only 0 GPUs free: GPU 0 {expected}" in proc.stderr, proc.stderr
        assert "pid 1 " not in proc.stderr and "pid 1)" not in proc.stderr
        assert path.read_text() == "1\n"  # another's file is never written
    finally:
        holder.kill()
        holder.wait()


def test_a_run_killed_with_sigkill_leaves_its_gpu_held_by_the_job(shared, tmp_path):
    env = shared.env(gpus(1))
    job_pid = tmp_path / "job.pid"
    run = subprocess.Popen(
        [cli_path(), *run_args(tmp_path, 1, "sh", "-c", f"echo $$ > {job_pid}.tmp; "
                                                        f"mv {job_pid}.tmp {job_pid}; exec sleep 60")],
        env=env, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if job_pid.exists():
                break
            time.sleep(0.05)
        job = int(job_pid.read_text())
        run.kill()
        run.wait(timeout=10)
        listed = tv(["pick"], env)
        assert listed.returncode == 1
        assert (f"  GPU 0: held by processes that inherited it from pid {run.pid} (exited), "
                "lock file of root") in listed.stderr.splitlines(), listed.stderr
        refused = tv(run_args(tmp_path, 1, "true"), env)
        assert refused.returncode == 2 and "only 0 GPUs free" in refused.stderr
    finally:
        if job_pid.exists():
            os.kill(int(job_pid.read_text()), signal.SIGKILL)
    for _ in range(100):  # the job is gone (or a zombie, which holds no files)
        try:
            state = pathlib.Path(f"/proc/{job}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    assert tv(["pick"], env).returncode == 0
    started = tv(run_args(tmp_path / "again", 1, "true"), env)
    assert started.returncode == 0, started.stderr
