"""The summary answers: epochs cut by an exception, phases with only eval
marked, the loss per epoch, leaked workers, the processes that used the most,
a shared GPU; events.jsonl in time order."""
import json
import os
import subprocess
import sys

import pytest

from conftest import HELPERS, ROOT
from schema import check_run_dir
from test_gpus import FAKE, gpu_rows

SCRIPT = [sys.executable, str(HELPERS / "markers_script.py")]
ENV = {"PYTHONPATH": str(ROOT / "python")}


def test_alone_an_epoch_cut_by_an_exception_ends_at_its_last_step(tmp_path):
    out = tmp_path / "alone"
    proc = subprocess.run([*SCRIPT, "--out", str(out), "--crash-in-epoch", "1", "--teardown", "2"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **ENV})
    assert proc.returncode == 1 and "CUDA out of memory" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exception"]["type"] == "RuntimeError", summary.get("exception")
    assert "CUDA out of memory" in summary["exception"]["message"]
    first, second = summary["epochs"]
    assert second["complete"] is False
    # 20 steps of 10 ms, then 2 s of teardown that is not the epoch's.
    assert second["duration_s"] < 1.0, second
    assert second["steps_per_second"] > 0.5 * first["steps_per_second"], (first, second)
    check_run_dir(out)


def test_under_run_the_cut_epoch_is_left_out_of_the_mean(run_tv):
    r = run_tv([*SCRIPT, "--crash-in-epoch", "1", "--teardown", "2"], env=ENV)
    assert r.proc.returncode == 1
    second = r.summary["epochs"][1]
    assert second["complete"] is False and second["duration_s"] < 1.0, second
    assert "Epochs   1, mean" in r.proc.stderr and "1 cut short" in r.proc.stderr, r.proc.stderr
    assert "exit code 1 (RuntimeError: CUDA out of memory" in r.proc.stderr, r.proc.stderr


def test_epoch_records_carry_the_logged_loss_and_eval_only_phases_leave_training(run_tv):
    r = run_tv([*SCRIPT, "--eval-only", "--logs", "--steps", "30"], env=ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    epochs = r.summary["epochs"]
    assert [e["logs"]["loss"] for e in epochs] == [1.0, 0.5, pytest.approx(1 / 3)], epochs
    assert epochs[-1]["logs"]["accuracy"] == pytest.approx(0.7)  # the last epoch too
    assert "loss 0.3333" in r.proc.stderr, r.proc.stderr
    phases = r.summary["phases"]
    # Each epoch: 30 x 10 ms of unmarked steps, then 150 ms of eval.
    assert phases["train"]["count"] == 3
    assert 0.5 < phases["train"]["share"] < 0.85, phases
    assert 0.15 < phases["eval"]["share"] < 0.5, phases
    assert phases["train"]["share"] + phases["eval"]["share"] == pytest.approx(1, abs=0.01)
    check_run_dir(r.out)


def test_events_are_written_in_time_order(run_tv):
    r = run_tv([*SCRIPT, "--steps", "5"], env=ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    times = [e["t"] for e in r.events]
    types = [e["type"] for e in r.events]
    assert "epoch" in types and "process_start" in types and "client_start" in types
    assert times == sorted(times), list(zip(types, times))


def test_processes_left_running_are_named_and_top_processes_listed(run_tv):
    # b"x" * n writes its pages (a zeroed bytearray may stay unmapped); the
    # sleep lets a few samples see them. The process left running writes
    # nowhere: holding the command's output open, it would keep the test
    # waiting for its end.
    r = run_tv(["sh", "-c", "sleep 30 >/dev/null 2>&1 & python3 -c 'import time; "
                "x = b\"x\" * (80 << 20); sum(range(3000000)); time.sleep(0.5)'"])
    try:
        assert r.proc.returncode == 0, r.proc.stderr
        leaked = r.summary["leaked"]
        assert [p["name"] for p in leaked] == ["sleep"], leaked
        assert leaked[0]["command"] == "sleep 30"
        assert "still running after the command ended: sleep 30 (pid" in r.proc.stderr
        top = r.summary["processes"]
        # Named for the program it ran, even when first seen as the forked shell.
        assert top["by_memory"][0]["name"].startswith("python3"), top
        assert "python3 -c" in top["by_memory"][0]["command"], top
        assert top["by_memory"][0]["memory_bytes_max"] > 60 << 20
        assert top["by_cpu"][0]["cpu_seconds"] > 0
        roles = {p["pid"]: p.get("role") for p in top["by_cpu"] + top["by_memory"]}
        assert roles.get(r.meta["pid"]) in (None, "main"), roles
        check_run_dir(r.out)
    finally:
        for p in r.summary.get("leaked", []):
            try:
                os.kill(p["pid"], 9)
            except ProcessLookupError:
                pass


def test_a_process_that_ends_just_after_the_command_is_reaped_not_left_running(run_tv):
    # A spawned multiprocessing child starts Python's resource tracker, which
    # ends only when the command's exit closes its pipe: it outlives the
    # command by a moment, re-parented to trainvitals. It is reaped then, not
    # named as left running, and the job's cgroup goes with it.
    r = run_tv(["python3", "-c", "import multiprocessing as mp, time; "
                "p = mp.get_context('spawn').Process(target=time.sleep, args=(0.3,)); "
                "p.start(); p.join(); time.sleep(0.5)"])
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.summary["leaked"] == [], r.summary["leaked"]
    assert "Leaked" not in r.proc.stderr and "cgroup stays" not in r.proc.stderr, r.proc.stderr
    # The tracker was there all along: a process of the tree the command did not wait for.
    commands = [e.get("cmdline", "") for e in r.events if e["type"] == "process_start"]
    assert any("resource_tracker" in c for c in commands), commands


def test_shared_gpu_shows_the_jobs_share_and_its_processes(run_tv, tmp_path):
    scenario = {"devices": [{
        "uuid": "GPU-5a5a5a5a-shared",
        "series": {"util_gpu": 92, "memory_used_bytes": 30e9,
                   "clock_event_reasons": {"step": [[0, 4], [1.5, 32]]}},
        "processes": [{"pid": "job", "memory_bytes": 4e9, "sm_util": 5},
                      {"pid": 4242, "memory_bytes": 25e9, "sm_util": 87}]}]}
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(scenario))
    env = {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(path)}
    r = run_tv([sys.executable, "-c", "import time; time.sleep(3.2)"], "--interval", "0.5", env=env)
    assert r.proc.returncode == 0, r.proc.stderr
    g = r.summary["gpus"][0]
    assert g["job_sm_util_ratio"]["mean"] == pytest.approx(0.05, abs=0.01), g
    assert g["other_memory_bytes"]["max"] == 25e9
    text = r.proc.stderr
    assert "job's SM share mean 5%" in text, text
    assert "other processes' peak 23.3 GiB (1 process)" in text, text
    assert "throttled" in text and "power cap" in text and "thermal" in text, text
    procs = gpu_rows(r)[-1]["processes"]
    assert {(p["job"], p["memory_bytes"]) for p in procs} == {(True, 4e9), (False, 25e9)}, procs
    assert any(p["pid"] == 4242 and p["sm_util_ratio"] == pytest.approx(0.87) for p in procs)
    check_run_dir(r.out)


def test_top_cpu_names_the_program_with_its_role_beside_it(run_tv):
    r = run_tv([*SCRIPT, "--steps", "5"], env=ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    main = next(p for p in r.summary["processes"]["by_cpu"] if p.get("role") == "main")
    program = f"{os.path.basename(sys.executable)} markers_script.py"
    top = next(line for line in r.proc.stderr.splitlines() if line.startswith("  Top CPU "))
    assert f"{program} (main, pid {main['pid']}) " in top, top


def test_every_short_epoch_shows_the_jobs_sm_share_held_between_readings(run_tv, tmp_path):
    # NVML's process utilization is read every 5 s; epochs of under 1 s each.
    scenario = {"devices": [{"uuid": "GPU-5a5a5a5a-epochs", "series": {"util_gpu": 83},
                             "processes": [{"pid": "job", "memory_bytes": 4e9, "sm_util": 40}]}]}
    path = tmp_path / "epochs.json"
    path.write_text(json.dumps(scenario))
    env = {**ENV, "TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(path)}
    r = run_tv([*SCRIPT, "--steps", "50", "--epochs", "5"], "--interval", "0.5", env=env)
    assert r.proc.returncode == 0, r.proc.stderr
    epochs = r.summary["epochs"]
    assert len(epochs) == 5, epochs
    reads = [row["t"] for row in r.rows if "job_sm_util_ratio" in row["gpus"][0]]
    assert reads, r.rows
    held = [e for e in epochs if e["start_t"] + e["duration_s"] > reads[0]]
    for e in held:
        assert e["gpus"][0]["job_sm_util_ratio_mean"] == pytest.approx(0.4), e
    # The case at hand: epochs without a reading of their own still show it.
    alone = [e for e in held
             if not any(e["start_t"] <= t <= e["start_t"] + e["duration_s"] for t in reads)]
    assert alone, (reads, epochs)
    lines = [line for line in r.proc.stderr.splitlines() if line.startswith("trainvitals: epoch")]
    assert sum("(job SM 40%)" in line for line in lines) >= len(held), lines
