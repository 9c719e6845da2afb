"""One script is one run: callbacks and monitors live across fit, evaluate,
predict, validate and test, alone as under `trainvitals run`.

Each framework's multi-call script (helpers/multi_call.py) runs once alone and
once under `trainvitals run`: one run directory, every phase with its time,
epochs numbered without repeats and tagged with their call, the same epoch and
phase structure both ways, one summary on stderr. TensorFlow and Paddle each
run in their own process (both in one process crash).
"""
import json
import re
import subprocess
import sys

import pytest

from conftest import HELPERS
from schema import check_run_dir
from test_frameworks import TORCH_PY, env

EPOCHS = 2
STEPS = 5
SCRIPT = HELPERS / "multi_call.py"
SUMMARY_LINE = re.compile(r"^trainvitals: .* — .* after ", re.M)

# name: (python, phases with their count, calls of the epochs in order)
CASES = {
    # fit (validation each epoch) -> evaluate -> predict -> fit
    "keras": (sys.executable, {"train": 2, "eval": 2 * EPOCHS + 1, "predict": 1},
              [1] * EPOCHS + [4] * EPOCHS),
    "paddle": (sys.executable, {"train": 2, "eval": 2 * EPOCHS + 1, "predict": 1},
               [1] * EPOCHS + [4] * EPOCHS),
    # fit (validation each epoch; the sanity check is no phase) -> validate -> test -> predict
    "lightning": (str(TORCH_PY), {"train": 1, "eval": EPOCHS + 1, "test": 1, "predict": 1},
                  [1] * EPOCHS),
}


def command(name, *args):
    python = CASES[name][0]
    if python == str(TORCH_PY) and not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it (PyTorch and Lightning)")
    return [python, str(SCRIPT), name, "--epochs", str(EPOCHS), "--steps", str(STEPS), *args]


def run_script(args, cwd, tv=None, out=None):
    if tv is not None:
        args = [tv, "run", "--out", str(out), "--interval", "0.2", "--", *args]
    proc = subprocess.run(args, cwd=cwd, env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "done: " in proc.stdout, proc.stdout
    return proc


def structure(out, name):
    """The run's epochs and phases, checked against the script's calls."""
    summary = json.loads((out / "summary.json").read_text())
    _, phase_counts, calls = CASES[name]
    epochs = summary["epochs"]
    assert [e["epoch"] for e in epochs] == list(range(len(calls))), epochs
    assert [e.get("call") for e in epochs] == calls, epochs
    for e in epochs:
        assert e["steps"] == STEPS and e.get("complete", True), e
    phases = summary["phases"]
    assert {p: phases[p]["count"] for p in phases} == phase_counts, phases
    for p in phases.values():
        assert p["duration_s"] > 0, phases
    check_run_dir(out)
    return [(e["epoch"], e["call"], e["steps"]) for e in epochs], phase_counts


@pytest.mark.parametrize("name", list(CASES))
def test_a_multi_call_script_is_one_run_alone_and_under_run(name, tv, tmp_path):
    # Alone (Keras with out=, the others in the default place): one run directory.
    alone_cwd = tmp_path / "alone"
    alone_cwd.mkdir()
    extra = ["--out", str(tmp_path / "keras-run"), "--interval", "0.2"] if name == "keras" else \
        ["--interval", "0.2"]
    if name == "keras":
        extra.append("--initial-epoch")  # the second fit's numbers follow Keras's initial_epoch
    proc = run_script(command(name, *extra), alone_cwd)
    if name == "keras":
        alone_out = tmp_path / "keras-run"
        assert list(alone_cwd.iterdir()) == []
    else:
        runs = list((alone_cwd / "trainvitals-runs").iterdir())
        assert len(runs) == 1, runs
        alone_out = runs[0]
    assert len(SUMMARY_LINE.findall(proc.stderr)) == 1, proc.stderr[-4000:]
    alone = structure(alone_out, name)
    meta = json.loads((alone_out / "meta.json").read_text())
    assert meta["mode"] == "python"

    # Under `trainvitals run`: the supervisor's one run, the same structure.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = run_script(command(name), cwd, tv=tv, out=tmp_path / "supervised")
    assert list(cwd.iterdir()) == []  # the script made no run directory of its own
    assert len(SUMMARY_LINE.findall(proc.stderr)) == 1, proc.stderr[-4000:]
    assert structure(tmp_path / "supervised", name) == alone


def test_an_out_that_an_earlier_process_filled_fails_at_construction(tmp_path):
    out = tmp_path / "runs" / "a"
    script = ("import sys, trainvitals\n"
              "m = trainvitals.monitor(out=sys.argv[1], interval=0.2, quiet=True)\n"
              "m.epoch(0); m.step(); m.close()\n"
              "print('first run done')\n")
    first = subprocess.run([sys.executable, "-c", script, str(out)], env=env(),
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert (out / "samples.jsonl").exists()
    again = ("import sys, trainvitals\n"
             "try:\n"
             "    trainvitals.monitor(out=sys.argv[1])\n"
             "except trainvitals._core.ConfigError as e:\n"
             "    print('refused:', e)\n"
             "    sys.exit(3)\n"
             "print('training would start here')\n")
    proc = subprocess.run([sys.executable, "-c", again, str(out)], env=env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "training would start" not in proc.stdout
    assert f"out={out} already holds the run of an earlier process" in proc.stdout
    assert "choose another directory" in proc.stdout


def test_a_failure_inside_a_hook_never_reaches_the_training(tmp_path):
    """The callback's epoch end fails inside trainvitals: the training completes,
    the failure is said once, and the run still ends with its summary."""
    proc = run_script(command("keras", "--fail-hook", "--interval", "0.2",
                              "--out", str(tmp_path / "run")), tmp_path)
    assert proc.stdout.strip().endswith("done: fit evaluate predict fit")
    said = [line for line in proc.stderr.splitlines() if "injected failure" in line]
    assert len(said) == 1, proc.stderr[-4000:]
    assert "VitalsCallback off for this run" in said[0]
    assert len(SUMMARY_LINE.findall(proc.stderr)) == 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    # The broken callback ended what it had open (epoch 0 of the first fit) and
    # went quiet for evaluate and predict; the second fit's new callback reports.
    epochs = [(e["epoch"], e.get("call"), e["steps"]) for e in summary["epochs"]]
    assert epochs == [(0, 1, STEPS)] + [(1 + i, 2, STEPS) for i in range(EPOCHS)], epochs
    assert summary["phases"]["train"]["count"] == 2, summary["phases"]
    assert "predict" not in summary["phases"], summary["phases"]
