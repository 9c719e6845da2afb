"""The framework hooks on real trainings: Keras, Paddle, Lightning, a plain PyTorch loop, DDP.

Each example trains a tiny model for EPOCHS epochs of STEPS steps with an
evaluation per epoch, once alone (the monitor writes the run directory) and
once under `trainvitals run` (the supervisor's one sampler does).
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import HELPERS, ROOT, read_jsonl
from schema import check_run_dir

EPOCHS = 3
STEPS = 12
TORCH_PY = ROOT / "build" / "venv" / "bin" / "python"

# name: (python, example, framework the client says it is)
FRAMEWORKS = {
    "keras": (sys.executable, "keras_train.py", "keras"),
    "paddle": (sys.executable, "paddle_train.py", "paddle"),
    "lightning": (str(TORCH_PY), "lightning_train.py", "lightning"),
    "torch": (str(TORCH_PY), "torch_monitor.py", "torch"),
}


def env():
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "python"), path) if p)}


def python_for(name):
    python = FRAMEWORKS[name][0]
    if python == str(TORCH_PY) and not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it (PyTorch and Lightning)")
    return python


def example(name, *args):
    python, script, _ = FRAMEWORKS[name]
    return [python_for(name), str(ROOT / "examples" / script), "--epochs", str(EPOCHS),
            "--steps", str(STEPS), *args]


def check_run(out, framework, mode, world=1):
    """The run directory holds EPOCHS epochs of STEPS steps, both phases and the markers."""
    meta = json.loads((out / "meta.json").read_text())
    assert meta["mode"] == mode
    summary = json.loads((out / "summary.json").read_text())
    epochs = summary.get("epochs")
    assert epochs, summary.keys()
    assert [e["epoch"] for e in epochs] == list(range(EPOCHS)), epochs
    for e in epochs:
        assert e["steps"] == STEPS, e
        assert e.get("complete", True), e
        assert e["duration_s"] > 0, e
    phases = summary.get("phases", {})
    for phase in ("train", "eval"):
        assert phase in phases, phases
        assert phases[phase]["duration_s"] > 0, phases
    training = [row["training"] for row in read_jsonl(out / "samples.jsonl") if "training" in row]
    assert training, "no row has a training object"
    assert any(t.get("steps", 0) > 0 for t in training), training
    events = read_jsonl(out / "events.jsonl")
    starts = [e for e in events if e["type"] == "client_start"]
    assert {e.get("framework") for e in starts} == {framework}, starts
    assert sorted(max(e["rank"], 0) for e in starts) == list(range(world)), starts
    types = [e["type"] for e in events]
    assert types.count("epoch_begin") == EPOCHS * world, types
    assert types.count("epoch_end") == EPOCHS * world, types
    ends = [e for e in events if e["type"] == "epoch_end"]
    assert all(e["steps"] == STEPS for e in ends), ends
    check_run_dir(out)
    return summary, events


def run_under_tv(tv, tmp_path, command):
    """`trainvitals run` from an empty working directory; returns (out, cwd)."""
    out, cwd = tmp_path / "run", tmp_path / "cwd"
    cwd.mkdir()
    proc = subprocess.run([tv, "run", "--out", str(out), "--interval", "0.2", "--", *command],
                          cwd=cwd, env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out, cwd


def only_run_dir(tmp_path, out, cwd):
    """One sampler made one run directory: the child made none (alone-mode default or --out)."""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run", "cwd"])
    assert list(cwd.iterdir()) == [], list(cwd.iterdir())
    assert (out / "meta.json").exists()


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_example_alone_writes_its_own_run_directory(name, tmp_path):
    out, cwd = tmp_path / "alone", tmp_path / "cwd"
    cwd.mkdir()
    extra = ["--log-dir", str(tmp_path / "logs")] if name == "keras" else []
    proc = subprocess.run(example(name, "--out", str(out), "--interval", "0.2", *extra), cwd=cwd,
                          env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"{name}: {EPOCHS} epochs" in proc.stdout
    check_run(out, FRAMEWORKS[name][2], "python")
    assert list(cwd.iterdir()) == []
    if name == "keras":  # log_dir= is the monitor's TensorBoard directory
        board = tmp_path / "logs" / "system"
        assert board.is_dir() and any(p.name.startswith("events.out.tfevents") for p in board.iterdir())


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_example_under_run_reports_to_the_one_sampler(name, tv, tmp_path):
    child_out = tmp_path / "child-out"  # ignored under `trainvitals run`
    out, cwd = run_under_tv(tv, tmp_path, example(name, "--out", str(child_out)))
    check_run(out, FRAMEWORKS[name][2], "run")
    assert not child_out.exists()
    only_run_dir(tmp_path, out, cwd)


def test_ddp_ranks_report_to_one_run(tv, tmp_path):
    if not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it")
    command = [str(TORCH_PY), str(HELPERS / "torch_ddp.py"), str(EPOCHS), str(STEPS)]
    out, cwd = run_under_tv(tv, tmp_path, command)
    summary, events = check_run(out, "torch", "run", world=2)
    for e in summary["epochs"]:
        ranks = e.get("ranks")
        assert ranks and sorted(r["rank"] for r in ranks) == [0, 1], e
        assert all(r["steps"] == STEPS for r in ranks), e
    pids = {e["pid"] for e in events if e["type"] == "client_start"}
    assert len(pids) == 2
    only_run_dir(tmp_path, out, cwd)
