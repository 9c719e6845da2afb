"""The stacks of a stalled job: real training processes hang in a lock, in a
DataLoader whose worker sleeps, and in a gloo collective one rank never joins;
the `stalled` finding must name the place each process waits, with its Python
stacks saved in the run directory. A healthy job is never asked; a process
that does not offer its stacks is never signalled. `trainvitals stacks` asks a
running job on demand."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import HELPERS, ROOT, Run, cli_path, stop_run
from schema import check_run_dir

HANG = HELPERS / "hang.py"
CONFIG = """interval = 0.5
[findings]
warmup_s = 2
window_s = 4
open_s = 2
hold_s = 60
stalled_s = 3
"""


@pytest.fixture
def hung(tmp_path):
    def run(*commands, name="run", env=None):
        config = tmp_path / "config.toml"
        config.write_text(CONFIG)
        script = tmp_path / f"{name}.sh"
        script.write_text("".join(f"{' '.join(map(str, c))} &\n" for c in commands) + "wait\n")
        full_env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), **(env or {})}
        full_env.pop("TRAINVITALS_CONFIG", None)
        full_env["TRAINVITALS_NVML_LIBRARY"] = str(tmp_path / "no-such-libnvidia-ml.so.1")
        out = tmp_path / name
        proc = subprocess.run([cli_path(), "run", "--config", str(config), "--out", str(out),
                               "--", "sh", str(script)],
                              capture_output=True, text=True, timeout=180, env=full_env)
        assert proc.returncode == 0, proc.stderr
        check_run_dir(out)
        return Run(proc, out)

    return run


def hang(kind, *more):
    return [sys.executable, str(HANG), "--kind", kind, *map(str, more)]


def stalled(r):
    return [f for f in r.summary["findings"] if f["id"] == "stalled"]


def stacks_events(r):
    return [e for e in r.events if e["type"] == "stacks"]


def test_a_main_thread_waiting_on_a_lock_is_named_with_its_line(hung):
    r = hung(hang("lock"))
    (f,) = stalled(r)
    ev = f["evidence"]
    assert ev["waits_in"] == "lock", f
    assert ev["at"].startswith(f"{HANG}:") and ev["at"].endswith(" in <module>")
    assert ev["code"] == "with lock:  # held by this thread until the timer releases it"
    assert "waits in a lock, condition or queue at" in f["message"]
    assert "thread that holds it" in f["advice"][0]
    # The whole stacks, every thread: the main one and the timer's.
    text = (r.out / ev["stacks"]).read_text()
    assert text.count("Thread 0x") + text.count("Current thread 0x") == 2, text
    assert "in run" in text and "threading.py" in text
    (e,) = stacks_events(r)
    assert e["reason"] == "stalled" and e["file"] == ev["stacks"] and e["threads"] == 2
    assert e["pid"] == f["subject"]["pid"]
    assert "done" in r.proc.stdout  # the training went on after the hang


def test_a_dataloader_whose_worker_sleeps_waits_in_the_loader(hung):
    r = hung(hang("loader"))
    (f,) = stalled(r)
    ev = f["evidence"]
    assert ev["waits_in"] == "data-loader", f
    assert "torch/utils/data/dataloader.py" in ev["frame"]
    # The script's innermost frame: the generator that iterates the loader.
    assert ev["code"] == "yield from DataLoader(Slow(), batch_size=None, num_workers=1, " \
                         "prefetch_factor=1)"
    assert "DataLoader(timeout=...)" in f["advice"][0]
    assert (r.out / ev["stacks"]).is_file()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_collective_that_one_rank_never_joins_names_both_places(hung):
    port = free_port()
    r = hung(["env", "RANK=0", *hang("collective", "--rank", 0, "--port", port)],
             ["env", "RANK=1", *hang("collective", "--rank", 1, "--port", port)], name="ranks")
    by_rank = {f["subject"]["rank"]: f for f in stalled(r)}
    assert sorted(by_rank) == [0, 1], stalled(r)
    waiting, sleeping = by_rank[0]["evidence"], by_rank[1]["evidence"]
    assert waiting["waits_in"] == "collective", by_rank[0]
    assert waiting["frame"].startswith("all_reduce (torch/distributed/"), waiting
    assert waiting["code"] == "dist.all_reduce(t)"
    assert sleeping["waits_in"] == "sleep", by_rank[1]
    assert sleeping["code"] == "time.sleep(args.hang_s)"
    # Rank 0's advice names where the rank it waits for is.
    advice = by_rank[0]["advice"][0]
    assert "another rank never joined: rank 1 waits in a sleep at" in advice, advice
    assert "init_process_group" in advice
    files = sorted(p.name for p in (r.out / "stacks").iterdir())
    assert len(files) == 2 and all("-stalled-rank" in n for n in files), files


def test_a_healthy_job_is_never_asked_and_a_job_that_offers_nothing_is_not_signalled(hung):
    r = hung(hang("none"))
    assert stalled(r) == [] and stacks_events(r) == []
    assert not (r.out / "stacks").exists()
    # TRAINVITALS_STACKS=0: no handler; a real-time signal would kill it.
    r = hung(hang("lock"), name="off", env={"TRAINVITALS_STACKS": "0"})
    (f,) = stalled(r)
    assert "waits_in" not in f["evidence"] and "py-spy dump --pid" in f["advice"][0]
    assert stacks_events(r) == []
    assert "done" in r.proc.stdout


def test_stacks_asks_a_running_job_on_demand(tmp_path):
    out = tmp_path / "live"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"),
           "TRAINVITALS_NVML_LIBRARY": str(tmp_path / "none.so")}
    env.pop("TRAINVITALS_CONFIG", None)
    job = subprocess.Popen([cli_path(), "run", "--quiet", "--out", str(out), "--",
                            *hang("lock", "--hang-s", 30)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not list(out.glob("events.jsonl")) or "client_start" not in (
                out / "events.jsonl").read_text():
            assert time.time() < deadline and job.poll() is None
            time.sleep(0.2)
        time.sleep(5)  # into the hang (step 30 at 0.05 s a step, after the start)
        asked = subprocess.run([cli_path(), "stacks", str(out)], capture_output=True,
                               text=True, timeout=30, env=env)
        assert asked.returncode == 0, asked.stderr
        (pid,) = [json.loads(line)["pid"] for line in (out / "events.jsonl").open()
                  if '"client_start"' in line]
        lines = asked.stdout.splitlines()
        assert lines[0].startswith(f"pid {pid}: waits in lock at <module> ({HANG}:"), lines
        assert lines[1].endswith(": with lock:  # held by this thread until the timer "
                                 "releases it")
        saved = lines[2].removeprefix("  stacks: ")
        assert saved.startswith(str(out / "stacks" / f"1-request-{pid}.txt"))
        assert "Current thread" in open(saved).read()
        # By PID (the training process's) and as JSON.
        by_pid = subprocess.run([cli_path(), "stacks", str(pid), "--json"],
                                capture_output=True, text=True, timeout=30, env=env)
        assert by_pid.returncode == 0, by_pid.stderr
        (e,) = json.loads(by_pid.stdout)
        assert e["pid"] == pid and e["waits_in"] == "lock" and e["reason"] == "request"
        assert e["file"] == f"stacks/2-request-{pid}.txt"
        # Neither a run nor a process of one: said, with the sessions that run.
        wrong = subprocess.run([cli_path(), "stacks", str(tmp_path)], capture_output=True,
                               text=True, timeout=30, env=env)
        assert wrong.returncode == 1
        assert f"{tmp_path} is the run directory of no running session" in wrong.stderr
        assert str(out) in wrong.stderr
    finally:
        stop_run(job)
