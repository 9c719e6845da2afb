"""Alert actions end with the run (docs/alerts.md "When the run ends"): a
command still running gets SIGTERM, then SIGKILL 2 s later, and its log says
so; one whose `trainvitals run` is killed with SIGKILL is stopped by its
keeper; notices that never reached a hung webhook are said once."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

from conftest import ROOT, cli_path, read_jsonl
from prom_services import wait_for

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
IDLE_GPU = {"driver_version": "550.54.15", "devices": [
    {"uuid": "GPU-idle-0", "series": {"util_gpu": 0, "power_mw": 70000, "memory_used_bytes": 5e9},
     "processes": [{"pid": "job", "memory_bytes": 4e9, "sm_util": 0}]}]}
GRACE_S = 5  # deliveries at the end (docs/alerts.md)
KILL_AFTER_TERM_S = 2

# Ignores SIGTERM, says it started, sleeps 600 s; argv[2] is the test's marker.
STUBBORN = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "open(sys.argv[1], 'w').write('started')\n"
            "time.sleep(600)\n")


def fake_env(tmp_path):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(IDLE_GPU))
    return {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(path)}


def start_run(tmp_path, action, job_s, job_marker="job"):
    """`run` of a job sleeping `job_s` under the idle-GPU rule (held 1 s) with `action`;
    `job_marker` is an argument of the job, to find it by."""
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[alert]]\nname = "gpu-low-util"\nfor = "1s"\n' + action)
    args = [cli_path(), "run", "--out", str(tmp_path / "run"), "--interval", "0.5",
            "--alerts", str(rules), "--",
            sys.executable, "-c", f"import time; time.sleep({job_s})", job_marker]
    return subprocess.Popen(args, env=fake_env(tmp_path), stderr=subprocess.PIPE, text=True)


def with_marker(marker):
    """PIDs of the processes whose argv holds `marker` (zombies have none)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def kill_all(*markers):
    for marker in markers:
        for pid in with_marker(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def stubborn_command(tmp_path):
    marker = f"tv-alert-end-{uuid.uuid4().hex}"
    started = tmp_path / "started"
    argv = [sys.executable, "-c", STUBBORN, str(started), marker]
    return f"command = {json.dumps(argv)}\n", marker, started


def test_a_command_still_running_at_the_end_is_stopped_and_its_log_says_so(tmp_path):
    action, marker, started = stubborn_command(tmp_path)
    began = time.monotonic()
    run = start_run(tmp_path, action, 3)
    try:
        _, err = run.communicate(timeout=60)
    finally:
        kill_all(marker)
    took = time.monotonic() - began
    assert run.returncode == 0, err
    assert started.exists(), "the command never ran"
    assert with_marker(marker) == [], "the command outlived the run"
    assert took < 3 + GRACE_S + KILL_AFTER_TERM_S + 6, took
    log = (tmp_path / "run" / "alerts" / "gpu-low-util.log").read_text()
    assert "=== was still running when the run ended: SIGTERM\n" in log, log
    assert "=== still running: SIGKILL\n" in log, log
    assert "=== was still running when the run ended (was killed by SIGKILL)\n" in log, log
    events = read_jsonl(tmp_path / "run" / "events.jsonl")
    [failed] = [e for e in events if e["type"] == "alert_action_failed"]
    assert "was still running when the run ended" in failed["message"], failed
    # Its resolved notice waited behind it, and was lost with the end: said once.
    [lost] = [e for e in events if e["type"] == "alert_notices_lost"]
    assert lost["actions"][0]["run_ended"] >= 1, lost
    assert err.count("not delivered") == 1, err


def test_a_command_does_not_outlive_a_killed_run(tmp_path):
    action, marker, started = stubborn_command(tmp_path)
    job = f"tv-alert-end-job-{uuid.uuid4().hex}"
    run = start_run(tmp_path, action, 60, job)
    try:
        wait_for(lambda: started.exists(), what="the alert command to start", timeout=20)
        [command] = with_marker(marker)
        run.kill()  # SIGKILL: nothing of trainvitals runs after this
        run.wait(timeout=10)  # (its stderr stays open in the job it leaves behind)
        # SIGTERM is ignored: gone at SIGKILL, 2 s after its keeper saw its monitor die.
        gone = wait_for(lambda: not with_marker(marker), what="the command gone",
                        timeout=KILL_AFTER_TERM_S + 3)
        assert gone
    finally:
        kill_all(marker, job)
        run.stderr.close()
    assert command > 0
    log = (tmp_path / "run" / "alerts" / "gpu-low-util.log").read_text()
    assert "=== trainvitals ended while this ran: SIGTERM\n" in log, log
    assert "=== still running: SIGKILL\n" in log, log


def test_notices_a_hung_webhook_never_got_are_said_once(tmp_path):
    # Accepts connections and never answers.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except (socket.timeout, OSError):
                pass

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    try:
        run = start_run(tmp_path, f'webhook = "{url}"\n', 3)
        _, err = run.communicate(timeout=60)
    finally:
        stop.set()
        server.close()
        for c in held:
            c.close()
    assert run.returncode == 0, err
    assert held, "the webhook never connected"
    events = read_jsonl(tmp_path / "run" / "events.jsonl")
    [lost] = [e for e in events if e["type"] == "alert_notices_lost"]
    [action] = lost["actions"]
    assert action["alert"] == "gpu-low-util" and action["action"] == "webhook", lost
    # The firing notice under way and the resolved one behind it.
    assert lost["count"] == action["count"] == action["run_ended"] == 2, lost
    lines = [line for line in err.splitlines() if "not delivered" in line]
    assert lines == ["trainvitals: 2 alert notices were not delivered "
                     "(gpu-low-util webhook: 2 cut off by the end)"], err
