"""Faults of the monitor itself never cost the user the run: a GPU driver call
that never returns, threads that cannot start, a full disk. `trainvitals run`
still ends on time with the command's exit code and a summary; every complete
line of the run's files stays valid. And each thread says what it is."""
import errno
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from conftest import cli_path, read_jsonl
from prom_services import free_port, http_get, wait_for
from test_gpus import FAKE


def test_a_driver_call_that_never_returns_does_not_keep_the_run_from_ending(tmp_path):
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"devices": [{"hang": {"nvmlDeviceGetPowerUsage": 1.5}}]}))
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
           "FAKE_NVML_SCENARIO": str(scenario)}
    out = tmp_path / "run"
    start = time.monotonic()
    proc = subprocess.run([cli_path(), "run", "--out", str(out), "--interval", "0.5", "--",
                           "sh", "-c", "sleep 3; exit 3"],
                          env=env, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - start
    assert proc.returncode == 3, proc.stderr
    assert took < 3 + 5 + 4, took  # the command, the bounded wait for the sampler, slack
    assert "did not stop within" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_code"] == 3
    assert summary["samples"] > 0
    rows = read_jsonl(out / "samples.jsonl")
    assert rows and rows[0]["gpus"]


def pids_cgroup():
    """A fresh pids cgroup directory (v1 or v2), or None where none can be made."""
    for base in (pathlib.Path("/sys/fs/cgroup/pids"), pathlib.Path("/sys/fs/cgroup")):
        if not (base / "cgroup.procs").exists():
            continue
        if base.name != "pids" and "pids" not in (base / "cgroup.controllers").read_text():
            continue
        path = base / f"trainvitals-test-{os.getpid()}"
        try:
            path.mkdir()
        except OSError:
            continue
        return path
    return None


def test_threads_that_cannot_start_leave_the_command_running_to_its_end(tmp_path):
    # Two tasks allowed: trainvitals and its command. Every monitor thread fails
    # to start (as in a container at its pids limit) after the command started.
    group = pids_cgroup()
    if group is None:
        pytest.skip("no pids cgroup can be made here (needs root)")
    try:
        (group / "pids.max").write_text("2")
        out = tmp_path / "run"
        proc = subprocess.run(
            ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh", cli_path(), "run",
             "--out", str(out), "--", "sleep", "1.5"],
            capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert "runs unmonitored" in proc.stderr
        meta = json.loads((out / "meta.json").read_text())
        child = meta["pid"]
        assert not pathlib.Path(f"/proc/{child}").exists()  # waited for, not orphaned
        summary = json.loads((out / "summary.json").read_text())
        assert summary["exit_code"] == 0
    finally:
        group.rmdir()


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(path):
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC


def test_a_full_disk_leaves_no_broken_line_and_the_summary_waits_for_space(small_disk):
    out = small_disk / "run"
    proc = subprocess.Popen([cli_path(), "run", "--out", str(out), "--interval", "0.1",
                             "--", sys.executable, "-c", "import time; time.sleep(3)"],
                            stderr=subprocess.PIPE, text=True)
    said = []
    reader = threading.Thread(target=lambda: said.extend(proc.stderr), daemon=True)
    reader.start()
    wait_for(lambda: (out / "samples.jsonl").exists() and
             (out / "samples.jsonl").stat().st_size > 2000, what="a few rows")
    filler = small_disk / "filler"
    fill(filler)  # full from here to the end of the command
    wait_for(lambda: any("waiting up to" in line for line in said), timeout=30,
             what="trainvitals to wait for space for summary.json")
    filler.unlink()  # space returns
    assert proc.wait(timeout=30) == 0, "".join(said)
    text = (out / "samples.jsonl").read_text()
    assert text.endswith("\n")
    rows = [json.loads(line) for line in text.splitlines()]  # every line whole
    for line in (out / "events.jsonl").read_text().splitlines():
        json.loads(line)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rows"] == len(rows)
    assert summary["rows_unwritten"] > 0
    assert any("cannot write samples.jsonl" in line for line in said), "".join(said)


def test_every_thread_of_the_monitor_has_a_name(tmp_path):
    port = free_port()
    args = [cli_path(), "run", "--out", str(tmp_path / "run"), "--quiet", "--interval", "0.2",
            "--prometheus", str(port), "--pushgateway", f"http://127.0.0.1:{free_port()}",
            "--", "sleep", "30"]
    proc = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "trainvitals_job_processes" in http_get(
            f"http://127.0.0.1:{port}/metrics")[2], what="a first row")
        names = set()
        for comm in pathlib.Path(f"/proc/{proc.pid}/task").glob("*/comm"):
            names.add(comm.read_text().strip())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    threads = {"tv-sampler", "tv-sinks", "tv-http", "tv-push", "tv-history"}
    assert threads <= names, names
    assert names - threads - {"trainvitals"} == set(), names
