"""An alert rule with `stop = true` stops the training gracefully: under
`trainvitals run --alerts RULES`, once `training.steps > 30` holds, the rule
fires (alert_firing in events.jsonl), the sampler sends `alert-stop` through
the step slots (docs/markers.md), and a plain PyTorch loop (`m.should_stop`),
Keras and Paddle (`model.stop_training`) and Lightning (`trainer.should_stop`)
stop long before their planned epochs, whatever on_oom_risk says, and exit 0."""
import json
import mmap
import os
import pathlib
import struct
import subprocess
import sys
import threading
import time

import pytest

from conftest import HELPERS, Run, cli_path
from schema import check_run_dir
from test_findings import PY_ENV

PLANNED = 200  # epochs of 5 steps, 20 ms a step: 20 s when nothing stops it
STOP_RULE = """[[alert]]
name = "enough-steps"
expr = "training.steps > 30"
stop = true
"""
LINE = "trainvitals: an alert asks the training to stop; it stops after this "


def train(tmp_path, framework, rules, planned=PLANNED, publish=None):
    (tmp_path / "config.toml").write_text("interval = 0.5\n")
    (tmp_path / "rules.toml").write_text(rules or "")
    out = tmp_path / "run"
    result = tmp_path / "result.json"
    env = {**os.environ, **PY_ENV}
    env.pop("TRAINVITALS_CONFIG", None)
    # oom_train.py's default on_oom_risk is "warn": the stop must not depend on it.
    args = [cli_path(), "run", "--quiet", "--config", str(tmp_path / "config.toml"),
            "--alerts", str(tmp_path / "rules.toml"), "--out", str(out), "--",
            sys.executable, str(HELPERS / "oom_train.py"), "--framework", framework,
            "--epochs", str(planned), "--epoch-s", "0.1", "--steps", "5", "--max-s", "120",
            "--result", str(result)]
    if rules is None:
        args.remove("--alerts")
        args.remove(str(tmp_path / "rules.toml"))
    if publish is None:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=240, env=env)
    else:
        child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env)
        writer = threading.Thread(target=publish, args=(child.pid,), daemon=True)
        writer.start()
        stdout, stderr = child.communicate(timeout=240)
        writer.join(5)
        proc = subprocess.CompletedProcess(args, child.returncode, stdout, stderr)
    r = Run(proc, out)
    r.result = json.loads(result.read_text()) if result.exists() else None
    return r


def firing(r):
    return [e for e in r.events if e["type"] == "alert_firing"]


@pytest.mark.parametrize("framework", ["torch", "keras", "lightning", "paddle"])
def test_a_stop_rule_ends_the_training_before_its_planned_epochs(tmp_path, framework):
    r = train(tmp_path, framework, STOP_RULE)
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.result is not None, r.proc.stderr
    [fired] = firing(r)
    assert fired["alert"] == "enough-steps", fired
    lines = [x for x in r.proc.stderr.splitlines() if x.startswith(LINE)]
    unit = "epoch" if framework == "paddle" else "step"
    assert lines == [LINE + unit], r.proc.stderr  # said once
    # More than 30 steps (6 epochs of 5) before the rule can hold; stopped
    # within a few rows of it, long before the plan.
    assert 6 <= r.result["epochs_run"] < PLANNED // 4, (r.result, r.proc.stderr)
    if framework == "torch":
        assert r.result["should_stop"] is True
    check_run_dir(r.out)


def test_a_rule_without_stop_lets_the_training_finish(tmp_path):
    rules = STOP_RULE.replace("stop = true\n", "")
    r = train(tmp_path, "torch", rules, planned=12)
    assert r.proc.returncode == 0, r.proc.stderr
    assert firing(r), r.proc.stderr  # the rule fired: it only did not ask to stop
    assert r.result["epochs_run"] == 12 and r.result["should_stop"] is False, r.result
    assert LINE not in r.proc.stderr


# The back-channel as docs/markers.md lays it out (src/markers/protocol.h).
HEADER, SLOT, SLOTS, RISK = 64, 64, 256, 24


def steps_file(supervisor_pid, deadline):
    """The steps file of the supervisor's markers: beside TRAINVITALS_SOCKET, which
    it sets for its command."""
    while time.monotonic() < deadline:
        for task in pathlib.Path(f"/proc/{supervisor_pid}/task").glob("*/children"):
            for pid in task.read_text().split():
                try:
                    env = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                except OSError:
                    continue
                for entry in env:
                    if entry.startswith(b"TRAINVITALS_SOCKET="):
                        return pathlib.Path(entry.split(b"=", 1)[1].decode()).parent / "steps"
        time.sleep(0.05)
    raise TimeoutError("no marker socket")


def publish_stop_after(steps):
    """Writes an alert-stop record (kind 4) into a real supervisor's steps file
    once a training process took more than `steps` steps, as the sampler does
    when a rule with `stop = true` fires: the record under its sequence lock,
    then the claimed slots' risk_seq words."""

    def publish(supervisor_pid):
        deadline = time.monotonic() + 120
        path = steps_file(supervisor_pid, deadline)
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(path, "r+b") as f, mmap.mmap(f.fileno(), HEADER + SLOTS * SLOT) as m:
            claimed = []
            while time.monotonic() < deadline:
                claimed = [i for i in range(SLOTS)
                           if struct.unpack_from("<I", m, HEADER + i * SLOT)[0] != 0]
                if any(struct.unpack_from("<Q", m, HEADER + i * SLOT + 8)[0] > steps
                       for i in claimed):
                    break
                time.sleep(0.02)
            lock = struct.unpack_from("<I", m, RISK)[0]
            struct.pack_into("<I", m, RISK, lock + 1)
            struct.pack_into("<IHhidd i", m, RISK + 4, 1, 4, -1, -1, float("nan"), 0.0, -1)
            struct.pack_into("<I", m, RISK, lock + 2)
            for i in claimed:
                struct.pack_into("<I", m, HEADER + i * SLOT + 52, 1)

    return publish


@pytest.mark.parametrize("framework", ["torch", "keras", "lightning", "paddle"])
def test_an_alert_stop_record_stops_each_framework(tmp_path, framework):
    """The glue's half alone, against a real supervisor's steps file: the
    record the sampler writes (its layout in docs/markers.md) stops the
    training, whatever on_oom_risk says."""
    r = train(tmp_path, framework, None, publish=publish_stop_after(30))
    assert r.proc.returncode == 0, r.proc.stderr
    lines = [x for x in r.proc.stderr.splitlines() if x.startswith(LINE)]
    assert lines == [LINE + ("epoch" if framework == "paddle" else "step")], r.proc.stderr
    assert 6 <= r.result["epochs_run"] < PLANNED // 4, (r.result, r.proc.stderr)
    if framework == "torch":
        assert r.result["should_stop"] is True
