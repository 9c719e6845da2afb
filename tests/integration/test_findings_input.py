"""input-bound and straggler on real PyTorch trainings whose input is planted.

helpers/input_train.py sleeps in its dataset for every batch (or on one DDP
rank only) under `trainvitals run`; the findings must name exactly that, with
the data-wait share the script planted, and a loop whose workers load ahead
must get no finding at all. A Keras fit whose generator sleeps is judged the
same way (helpers/data_wait_train.py).
"""
import json
import subprocess
import sys

import pytest

from conftest import HELPERS
from test_frameworks import TORCH_PY, env

# Short windows: a run of ~10 s is judged like a long one by the defaults.
CONFIG = "[findings]\nwarmup_s = 2\nwindow_s = 4\nopen_s = 1\nhold_s = 4\n"


def train(run_tv, tmp_path, *args, name="run", extra=""):
    if not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it")
    config = tmp_path / "tv.toml"
    config.write_text(CONFIG + extra)
    command = [str(TORCH_PY), str(HELPERS / "input_train.py"), "--seconds", "10", *args]
    run = run_tv(command, "--interval", "0.5", "--config", str(config), timeout=240, env=env(),
                 name=name)
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    return run, config


def planted(run):
    return float(run.proc.stdout.split("planted")[1].split()[0])


def fetched(run):
    return float(run.proc.stdout.split("fetched")[1].split()[0])


def ids(run):
    return sorted(f["id"] for f in run.summary["findings"])


def test_a_loader_that_sleeps_is_input_bound_by_the_planted_share(run_tv, tmp_path):
    run, _ = train(run_tv, tmp_path, "--sleep-ms", "20", "--work-ms", "25")
    assert ids(run) == ["input-bound"], run.summary["findings"]
    finding = run.summary["findings"][0]
    assert finding["severity"] == "warning"  # >= 20 %: TensorFlow's "highly input-bound"
    # The loop's own clock is the oracle: the planted sleeps plus the loading
    # work around them (more of it on a slow machine).
    assert fetched(run) >= planted(run) - 0.01
    assert finding["evidence"]["data_wait_ratio"] == pytest.approx(fetched(run), abs=0.05)
    assert "num_workers" in finding["advice"][0]  # PyTorch's own advice
    said = [line for line in run.proc.stderr.splitlines()
            if line.startswith("trainvitals: input-bound (warning)")]
    assert len(said) == 1, run.proc.stderr
    opened = [e for e in run.events if e["type"] == "finding_open"]
    assert [e["id"] for e in opened] == ["input-bound"]


def waited_share(waits, start, end):
    """The share of [start, end] the loop's own clock saw it wait for a batch."""
    return sum(max(0.0, min(t + d, end) - max(t, start)) for t, d in waits) / (end - start)


def test_workers_loading_ahead_leave_nothing_to_find(run_tv, tmp_path):
    waits_file = tmp_path / "waits.json"
    run, _ = train(run_tv, tmp_path, "--sleep-ms", "20", "--work-ms", "25", "--workers", "2",
                   "--waits", str(waits_file))
    waits = json.loads(waits_file.read_text())
    for f in run.summary["findings"]:
        # Only where the workers really fell behind: a machine loaded enough
        # to starve them of CPU for a second. The loop's own clock over the
        # finding's window must then bear its share out; nothing else may open.
        assert f["id"] == "input-bound", run.summary["findings"]
        window = f["evidence"]["window_s"]
        seen = waited_share(waits, f["opened_t"] - window, f["opened_t"])
        print("input-bound where the loop's clock saw", seen, f["evidence"])
        assert seen >= 0.1 - 0.03 and f["evidence"]["data_wait_ratio"] == pytest.approx(
            seen, abs=0.03), (f, seen)
    if run.summary["findings"]:
        return
    assert not [e for e in run.events if e["type"].startswith("finding_")]
    # The few batches the workers had not loaded yet are the only time lost:
    # no more than the loop's own clock saw it wait (over the run's longer wall).
    health = run.summary["health"]
    lost = health["goodput"]["ratios"]["data_wait"]
    assert lost <= fetched(run) + 0.01, (health, run.proc.stdout)
    # A point per percent of the exact share; the summary's ratio is rounded
    # to four places, so the share it stands for may sit either side of a half.
    assert abs((100 - health["score"]) - 100 * lost) <= 0.5 + 0.005, health


def test_the_ddp_rank_whose_loader_sleeps_is_the_straggler(run_tv, tmp_path, tv):
    run, config = train(run_tv, tmp_path, "--sleep-ms", "30", "--work-ms", "20", "--ranks", "2",
                        "--slow-rank", "1")
    stragglers = [f for f in run.summary["findings"] if f["id"] == "straggler"]
    assert len(stragglers) == 1, run.summary["findings"]
    assert stragglers[0]["subject"]["rank"] == 1
    evidence = stragglers[0]["evidence"]
    # The slow rank's own clock is the oracle: its sleeps plus the loading work
    # around them (more of it on a loaded machine).
    assert fetched(run) >= planted(run) - 0.01
    assert evidence["data_wait_ratio"] == pytest.approx(fetched(run), abs=0.07)
    assert evidence["others_data_wait_ratio"] < 0.1
    # The job as a whole waits too (rank 1 waits, rank 0 waits for rank 1 in
    # its all-reduce, which is not data wait): input-bound may come with it,
    # nothing else.
    assert set(ids(run)) <= {"straggler", "input-bound"}, run.summary["findings"]
    # The same verdict replayed from the run directory.
    replay = json.loads(subprocess.run(
        [tv, "analyze", str(run.out), "--json", "--config", str(config)],
        capture_output=True, text=True, check=True).stdout)
    strip = lambda fs: [(f["id"], f["severity"], f["subject"], f["opened_t"]) for f in fs]
    assert strip(replay["findings"]) == strip(run.summary["findings"])
    assert replay["health"]["score"] == run.summary["health"]["score"]


def keras_train(run_tv, tmp_path, *args, name, extra="", framework="keras"):
    """A Keras (or Paddle) fit of 3 epochs of 80 batches (helpers/data_wait_train.py)."""
    config = tmp_path / "tv.toml"
    config.write_text(CONFIG + extra)
    command = [sys.executable, str(HELPERS / "data_wait_train.py"), framework, "--batches", "80",
               "--truth", str(tmp_path / f"{name}.json"), *args]
    run = run_tv(command, "--interval", "0.5", "--config", str(config), timeout=240, env=env(),
                 name=name)
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    return run


@pytest.mark.slow  # input-bound with Keras's advice: in make test with its profile (test_profiles.py)
def test_a_keras_generator_that_sleeps_is_input_bound_on_a_cpu_only_machine(run_tv, tmp_path):
    run = keras_train(run_tv, tmp_path, "--input", "generator", "--sleep-ms", "40", "--work-ms",
                      "10", name="slow")
    assert ids(run) == ["input-bound"], run.summary["findings"]
    finding = run.summary["findings"][0]
    # The epochs' own shares (each checked against TensorFlow's trace in
    # test_data_wait.py) bound what the finding saw over its window.
    shares = [e["data_wait_ratio"] for e in run.summary["epochs"]]
    assert min(shares) - 0.05 <= finding["evidence"]["data_wait_ratio"] <= max(shares) + 0.05
    assert finding["severity"] == "warning"
    assert "PyDataset" in finding["advice"][0]  # Keras's own advice


@pytest.mark.slow  # a healthy loop finds nothing: checked in make test for PyTorch
def test_a_keras_generator_that_keeps_up_leaves_nothing_to_find(run_tv, tmp_path):
    run = keras_train(run_tv, tmp_path, "--input", "generator", "--sleep-ms", "2", "--work-ms",
                      "20", name="fast")
    assert run.summary["findings"] == [], run.summary["findings"]
    assert all(e["data_wait_ratio"] < 0.15 for e in run.summary["epochs"]), run.summary["epochs"]
