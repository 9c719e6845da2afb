"""`trainvitals compare` on two real PyTorch runs: the figures are each run's
own summary figures, the changes are computed against the first, epochs are
matched by number, and a run written before costs existed is costed from its
summary as a new one is."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
ENV = {"TRAINVITALS_NVML_LIBRARY": str(FAKE),
       "FAKE_NVML_SCENARIO": str(ROOT / "tests" / "fake_nvml" / "scenarios" / "cost.json")}


def train(out, steps):
    proc = subprocess.run([cli_path(), "run", "--quiet", "--interval", "0.5", "--out", str(out),
                           "--", sys.executable, str(ROOT / "examples" / "torch_monitor.py"),
                           "--epochs", "2", "--steps", str(steps)],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, **ENV})
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    return (tmp / "short", train(tmp / "short", 1500)), (tmp / "long", train(tmp / "long", 4500))


def compare(*args):
    return subprocess.run([cli_path(), "compare", *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_figures_are_the_runs_own_and_changes_against_the_first(two_runs):
    (a_dir, a), (b_dir, b) = two_runs
    proc = compare(a_dir, b_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert [r["label"] for r in c["runs"]] == ["short", "long"]
    figures = {f["key"]: f for f in c["figures"]}
    assert figures["duration_s"]["values"] == [a["duration_s"], b["duration_s"]]
    steps = [s["training"]["steps_per_second"]["mean"] for s in (a, b)]
    assert figures["steps_per_second"]["values"] == steps
    assert figures["steps_per_second"]["changes"][1] == round((steps[1] - steps[0]) / steps[0], 4)
    energy = [s["cost"]["energy_kwh"] for s in (a, b)]
    assert figures["energy_kwh"]["values"] == energy
    assert figures["energy_kwh"]["changes"][1] == round((energy[1] - energy[0]) / energy[0], 4)
    busy = [s["cost"]["busy_ratio"] for s in (a, b)]  # a share: the change is in points
    assert figures["gpu_busy_ratio"]["changes"][1] == round(busy[1] - busy[0], 4)
    assert [e["epoch"] for e in c["epochs"]] == [0, 1]
    assert c["epochs"][1]["duration_s"] == [a["epochs"][1]["duration_s"],
                                            b["epochs"][1]["duration_s"]]
    assert c["epochs"][0]["loss"] == [a["epochs"][0]["logs"]["loss"],
                                      b["epochs"][0]["logs"]["loss"]]
    # The longer epochs took about three times as long.
    assert figures["epoch_s"]["changes"][1] > 1


def test_the_table_a_person_reads(two_runs):
    (a_dir, _), (b_dir, _) = two_runs
    proc = compare(a_dir, b_dir)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["A:", "short", "B:", "long"]
    steps = next(l for l in lines if l.startswith("steps/s "))
    assert steps.rstrip().endswith("%"), steps
    assert any(l.startswith("energy per epoch ") for l in lines)
    assert "Epochs every run has (2), by number" in lines
    header = lines[lines.index("Epochs every run has (2), by number") + 1].split()
    assert header[:3] == ["epoch", "time", "A"]


def test_a_run_from_before_costs_is_costed_from_its_summary(two_runs, tmp_path):
    (a_dir, a), (b_dir, _) = two_runs
    old = tmp_path / "old"
    old.mkdir()
    for name in ("meta.json", "samples.jsonl", "events.jsonl"):
        (old / name).write_bytes((a_dir / name).read_bytes())
    (old / "summary.json").write_text(json.dumps({k: v for k, v in a.items() if k != "cost"}))
    c = json.loads(compare(old, b_dir, "--json").stdout)
    figures = {f["key"]: f for f in c["figures"]}
    assert figures["energy_kwh"]["values"][0] == a["cost"]["energy_kwh"]
    assert figures["gpu_hours"]["values"][0] == a["cost"]["gpu_hours"]


def test_what_cannot_be_compared_is_said(two_runs, tmp_path):
    (a_dir, _), _ = two_runs
    proc = compare(a_dir)
    assert proc.returncode == 2 and "RUN" in proc.stderr
    running = tmp_path / "running"
    running.mkdir()
    proc = compare(a_dir, running)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"trainvitals: {running}: no summary.json: the run is still "
                                  "going, or it was killed before it ended"), proc.stderr
