"""The data-wait share on real trainings whose wait is planted.

Each workload (helpers/data_wait_train.py) sleeps in its dataset for every
batch and works a known time per step, under `trainvitals run`; the script
writes what it planted (per epoch: wall time and time slept in the dataset),
and trainvitals's `training.data_wait_ratio` (rows) and epoch records must agree.
"""
import json
import statistics

import pytest

from conftest import HELPERS, read_jsonl
from test_frameworks import TORCH_PY

EPOCHS = 3


def train(run_tv, tmp_path, framework, *args, name="run"):
    truth_file = tmp_path / f"{name}-truth.json"
    python = str(TORCH_PY) if framework in ("torch", "lightning") else None
    if python and not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it")
    import sys
    command = [python or sys.executable, str(HELPERS / "data_wait_train.py"), framework,
               "--truth", str(truth_file), *args]
    run = run_tv(command, "--quiet", timeout=300, env={"PYTHONPATH": str(HELPERS.parents[2] / "python")},
                 name=name)
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    truth = json.loads(truth_file.read_text())["epochs"]
    assert len(truth) == EPOCHS, truth
    return run, truth


def measured_rows(run):
    return [row["training"]["data_wait_ratio"] for row in run.rows
            if "data_wait_ratio" in row.get("training", {})]


def epoch_ratios(run):
    epochs = run.summary["epochs"]
    assert len(epochs) == EPOCHS, epochs
    return [e.get("data_wait_ratio") for e in epochs]


def test_torch_loader_that_sleeps_reads_the_planted_share(run_tv, tmp_path):
    run, truth = train(run_tv, tmp_path, "torch", "--sleep-ms", "20", "--work-ms", "30")
    planted = [e["slept_s"] / e["wall_s"] for e in truth]
    print("planted", planted, "epochs", epoch_ratios(run))
    assert all(0.3 < p < 0.5 for p in planted), planted  # 20 ms of every ~50 ms
    for got, want in zip(epoch_ratios(run), planted):
        assert got is not None and abs(got - want) <= 0.05, (got, want)
    rows = measured_rows(run)
    assert len(rows) >= 3, rows
    overall = sum(e["slept_s"] for e in truth) / sum(e["wall_s"] for e in truth)
    # The rows inside the loop, each a full second of it.
    inner = rows[1:-1]
    assert abs(statistics.mean(inner) - overall) <= 0.05, (inner, overall)
    assert all(0 <= r <= 1 for r in rows), rows
    # The gauge keeps its peak tick too, never above the whole tick.
    peaks = [row["training"]["data_wait_ratio_max"] for row in run.rows
             if "data_wait_ratio" in row.get("training", {})]
    assert all(r <= p <= 1 for r, p in zip(rows, peaks)), (rows, peaks)


def test_torch_loader_with_enough_workers_reads_near_zero(run_tv, tmp_path):
    run, truth = train(run_tv, tmp_path, "torch", "--sleep-ms", "20", "--work-ms", "30",
                       "--workers", "4")
    ratios = epoch_ratios(run)
    print("epochs", ratios, "rows", measured_rows(run))
    assert all(r is not None for r in ratios), ratios
    # The first epoch starts the workers (their first batches are a real wait);
    # after that they keep ahead of the 30 ms step.
    assert ratios[0] < 0.25, ratios
    assert all(r < 0.05 for r in ratios[1:]), ratios


@pytest.mark.parametrize("framework", ["lightning", "paddle"])
def test_framework_callback_sees_a_sleeping_dataset(framework, run_tv, tmp_path):
    slow, truth = train(run_tv, tmp_path, framework, "--sleep-ms", "40", "--work-ms", "10",
                        name="slow")
    fast, _ = train(run_tv, tmp_path, framework, "--sleep-ms", "0", "--work-ms", "20",
                    name="fast")
    slow_ratios, fast_ratios = epoch_ratios(slow), epoch_ratios(fast)
    print(framework, "slow", slow_ratios, "fast", fast_ratios,
          "planted", [e["slept_s"] / e["wall_s"] for e in truth])
    assert all(r is not None and r > 0.5 for r in slow_ratios), slow_ratios
    assert all(r is not None and r < 0.15 for r in fast_ratios), fast_ratios
    assert statistics.mean(measured_rows(slow)) > 0.5
    assert statistics.mean(measured_rows(fast)) < 0.15


def test_keras_reads_absent_not_zero(run_tv, tmp_path):
    # Keras 3 takes the batch inside train_function: the gap between the batch
    # hooks would read ~0 on this input-bound job, so nothing is measured.
    run, truth = train(run_tv, tmp_path, "keras", "--sleep-ms", "40", "--work-ms", "5")
    planted = [e["slept_s"] / e["wall_s"] for e in truth]
    assert all(p > 0.5 for p in planted), planted  # it really is input-bound
    assert epoch_ratios(run) == [None] * EPOCHS
    assert measured_rows(run) == []
    assert all("data_wait_ratio" not in p for p in run.summary["phases"].values())
