"""Profiles taken when a finding opens, and on demand: a real PyTorch loop
whose loader sleeps (helpers/input_train.py) gets one torch.profiler capture
when input-bound opens, in the run directory, and the finding says what the
trace shows, agreeing with the share the loop waited by its own clock; a Keras
fit whose generator sleeps gets TensorFlow's trace, read the same way; a
healthy loop is never profiled, and the budget holds. `trainvitals profile`
asks a running job."""
import json
import subprocess
import time

import pytest

from conftest import HELPERS, ROOT, stop_run
from test_findings_input import fetched, keras_train, train
from test_frameworks import TORCH_PY, env

CAPTURE = "profile_steps = 10\nprofile_budget = 0.5\n"


def profiles(run):
    return [e for e in run.events if e["type"] == "profile"]


def test_input_bound_is_profiled_once_and_the_trace_bears_it_out(run_tv, tmp_path):
    run, _ = train(run_tv, tmp_path, "--sleep-ms", "20", "--work-ms", "25", extra=CAPTURE)
    (finding,) = [f for f in run.summary["findings"] if f["id"] == "input-bound"]
    (e,) = profiles(run)
    assert e["reason"] == "input-bound" and e["steps"] == 10, e
    assert e["dir"].startswith("profiles/input-bound-0-"), e
    (trace,) = (run.out / e["dir"]).glob("*.pt.trace.json")
    json.loads(trace.read_text())  # Chrome trace JSON: Perfetto and TensorBoard open it
    ev = finding["evidence"]
    assert ev["profile"] == e["dir"]
    # The trace's share of step time in the DataLoader agrees with the loop's own clock.
    assert ev["trace_data_loader_share"] == pytest.approx(fetched(run), abs=0.05), (ev, fetched(run))
    assert "confidence" not in ev
    assert f"A profile of 10 steps ({e['dir']}) shows" in finding["message"]
    names = [name for name, _ in ev["trace_top_ops"]]
    assert len(names) <= 5 and all(isinstance(n, str) for n in names), ev


@pytest.mark.slow  # a loader's wait captured and borne out: checked in make test with a sleep
def test_a_cpu_heavy_transform_is_profiled_once_and_the_trace_bears_it_out(run_tv, tmp_path):
    # The loader computes (a spin) instead of sleeping: the same wait, a busy CPU.
    run, _ = train(run_tv, tmp_path, "--transform-ms", "20", "--work-ms", "25", extra=CAPTURE,
                   name="transform")
    (finding,) = [f for f in run.summary["findings"] if f["id"] == "input-bound"]
    (e,) = profiles(run)
    assert e["reason"] == "input-bound", e
    ev = finding["evidence"]
    assert ev["trace_data_loader_share"] == pytest.approx(fetched(run), abs=0.05), (ev, fetched(run))


def test_a_keras_generator_that_sleeps_is_profiled_and_tensorflows_trace_bears_it_out(
        run_tv, tmp_path):
    run = keras_train(run_tv, tmp_path, "--input", "generator", "--sleep-ms", "40", "--work-ms",
                      "10", name="keras", extra=CAPTURE)
    (finding,) = [f for f in run.summary["findings"] if f["id"] == "input-bound"]
    (e,) = profiles(run)
    assert e["reason"] == "input-bound" and e["dir"].startswith("profiles/input-bound-"), e
    assert list((run.out / e["dir"]).glob("plugins/profile/*/*.xplane.pb")), e
    ev = finding["evidence"]
    assert ev["profile"] == e["dir"]
    # TensorFlow's own account of the wait (IteratorGetNext) agrees with the
    # producer-side measure the finding opened on.
    assert ev["trace_data_loader_share"] == pytest.approx(ev["data_wait_ratio"], abs=0.05), ev
    assert "confidence" not in ev
    assert finding["severity"] == "warning"
    assert "PyDataset" in finding["advice"][0]  # Keras's own advice


@pytest.mark.slow  # the same check as PyTorch's and Keras's in make test
def test_a_paddle_loader_that_sleeps_is_profiled_and_the_trace_bears_it_out(run_tv, tmp_path):
    run = keras_train(run_tv, tmp_path, "--sleep-ms", "40", "--work-ms", "10", name="paddle",
                      extra=CAPTURE, framework="paddle")
    (finding,) = [f for f in run.summary["findings"] if f["id"] == "input-bound"]
    (e,) = profiles(run)
    assert e["reason"] == "input-bound", e
    (trace,) = (run.out / e["dir"]).glob("*.json")
    json.loads(trace.read_text())  # Chrome trace JSON
    ev = finding["evidence"]
    print("paddle", ev)
    assert ev["profile"] == e["dir"]
    assert ev["trace_data_loader_share"] == pytest.approx(ev["data_wait_ratio"], abs=0.05), ev


def xplane_wait_share(trace_dir):
    """The share of TensorFlow's profile in IteratorGetNextOp, read with
    TensorFlow's own protobuf classes (the oracle of our decoder)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    (path,) = trace_dir.glob("plugins/profile/*/*.xplane.pb")
    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    times, waited = {}, 0
    for plane in space.planes:
        stats = {k: v.name for k, v in plane.stat_metadata.items()}
        for stat in plane.stats:
            times[stats.get(stat.metadata_id)] = stat.int64_value or stat.uint64_value
        names = {k: v.name for k, v in plane.event_metadata.items()}
        waited += sum(e.duration_ps for line in plane.lines for e in line.events
                      if names.get(e.metadata_id) == "IteratorGetNextOp::DoCompute")
    return waited / 1000 / (times["profile_stop_time"] - times["profile_start_time"])


def test_a_tf_data_pipeline_nothing_times_is_judged_from_a_trace(run_tv, tmp_path):
    # No data wait is measured (tf.data, not through the callback), the CPU
    # idles: a profile is asked, and its trace opens input-bound.
    run = keras_train(run_tv, tmp_path, "--input", "tfdata", "--sleep-ms", "40", "--work-ms",
                      "10", name="tfdata", extra=CAPTURE)
    assert all("data_wait_ratio" not in e for e in run.summary["epochs"])
    (e,) = profiles(run)
    assert e["reason"] == "input-bound", e
    (finding,) = run.summary["findings"]
    assert finding["id"] == "input-bound" and finding["severity"] == "warning", finding
    ev = finding["evidence"]
    assert ev["profile"] == e["dir"]
    share = xplane_wait_share(run.out / e["dir"])
    print("trace", ev["data_wait_ratio"], "oracle", share)
    assert ev["data_wait_ratio"] == pytest.approx(share, abs=0.02)
    assert 0.4 < share < 0.95  # 40 ms loading against about 15 ms of step
    assert finding["message"].startswith("Nothing measures this run's wait"), finding


@pytest.mark.slow  # a healthy job is never profiled: checked in make test for PyTorch
def test_a_keras_job_that_keeps_up_is_never_profiled(run_tv, tmp_path):
    # Its wait is not measured either, but its training thread is busy (one
    # core of two): a compute resource is, so no profile is asked.
    run = keras_train(run_tv, tmp_path, "--input", "tfdata", "--sleep-ms", "2", "--work-ms",
                      "20", "--batches", "200", name="fed", extra=CAPTURE)
    assert run.summary["findings"] == [], run.summary["findings"]
    assert profiles(run) == []


def test_a_healthy_loop_is_never_profiled_and_the_default_budget_holds(run_tv, tmp_path):
    run, _ = train(run_tv, tmp_path, "--sleep-ms", "20", "--work-ms", "25", "--workers", "2",
                   extra=CAPTURE, name="healthy")
    assert profiles(run) == [] and not (run.out / "profiles").exists()
    # 1 % of a 10 s run is 0.1 s: no room for 20 steps of 45 ms.
    run, _ = train(run_tv, tmp_path, "--sleep-ms", "20", "--work-ms", "25", name="budget")
    assert [f["id"] for f in run.summary["findings"]] == ["input-bound"]
    assert profiles(run) == [] and "profile" not in run.summary["findings"][0]["evidence"]


def test_profile_on_names_the_findings_that_take_one(run_tv, tv, tmp_path):
    run, _ = train(run_tv, tmp_path, "--sleep-ms", "20", "--work-ms", "25",
                   extra=CAPTURE + 'profile_on = ["cpu-bound", "eval-heavy"]\n')
    assert [f["id"] for f in run.summary["findings"]] == ["input-bound"]
    assert profiles(run) == [] and not (run.out / "profiles").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text('[findings]\nprofile_on = ["input-bund"]\n')
    proc = subprocess.run([tv, "run", "--config", str(bad), "--", "true"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc
    assert (f"{bad}:2: findings: 'profile_on': unknown finding 'input-bund', did you mean "
            "'input-bound'?") in proc.stderr, proc.stderr


def test_profile_asks_a_running_job(tv, tmp_path):
    if not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing")
    out = tmp_path / "live"
    job = subprocess.Popen([tv, "run", "--quiet", "--out", str(out), "--", str(TORCH_PY),
                            str(HELPERS / "input_train.py"), "--seconds", "30", "--sleep-ms",
                            "20", "--work-ms", "25"],
                           env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 90
        while not (out / "events.jsonl").exists() or "client_start" not in (
                out / "events.jsonl").read_text():
            assert time.time() < deadline and job.poll() is None
            time.sleep(0.2)
        asked = subprocess.run([tv, "profile", str(out), "--steps", "5", "--json"],
                               capture_output=True, text=True, timeout=120, env=env())
        assert asked.returncode == 0, asked.stderr
        (e,) = json.loads(asked.stdout)
        assert e["reason"] == "request" and e["steps"] == 5
        assert e["dir"].startswith("profiles/request-0-")
        assert 0.2 <= e["trace_data_loader_share"] <= 0.8, e
        assert list((out / e["dir"]).glob("*.pt.trace.json"))
        words = subprocess.run([tv, "profile", str(job.pid), "--steps", "3"],
                               capture_output=True, text=True, timeout=120, env=env())
        assert words.returncode == 0, words.stderr
        assert " 3 steps in " in words.stdout and "data loader" in words.stdout, words.stdout
    finally:
        stop_run(job)


@pytest.mark.parametrize("name", [pytest.param("lightning", marks=pytest.mark.slow), "paddle",
                                  "keras"])
def test_profile_uses_each_frameworks_own_profiler(tv, tmp_path, name):
    """Lightning's (torch.profiler) and Paddle's profilers write a Chrome trace,
    TensorFlow's the xplane TensorBoard's Profile tab opens: the figures come
    from either."""
    from test_frameworks import FRAMEWORKS, python_for
    python, script = python_for(name), FRAMEWORKS[name][1]
    out = tmp_path / name
    job = subprocess.Popen([tv, "run", "--quiet", "--out", str(out), "--", python,
                            str(ROOT / "examples" / script),
                            "--epochs", "1000", "--steps", "50"],
                           env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    try:
        deadline = time.time() + 120
        while not (out / "events.jsonl").exists() or "epoch_begin" not in (
                out / "events.jsonl").read_text():
            assert time.time() < deadline and job.poll() is None, job.stderr.read()
            time.sleep(0.2)
        asked = subprocess.run([tv, "profile", str(out), "--steps", "5", "--json"],
                               capture_output=True, text=True, timeout=120, env=env())
        assert asked.returncode == 0, asked.stderr
        (e,) = json.loads(asked.stdout)
        assert e["steps"] == 5 and e["dir"].startswith("profiles/request-0-"), e
        if name != "keras":
            (trace,) = (out / e["dir"]).glob("*.json")
            json.loads(trace.read_text())
        else:
            assert list((out / e["dir"]).glob("plugins/profile/*/*.xplane.pb")), e
        assert "trace_error" not in e, e
        assert e["trace_steps"] == 5 and 0 <= e["trace_data_loader_share"] < 0.5, e
        assert e["trace_top_ops"], e
        print(name, e["trace_top_ops"])
    finally:
        stop_run(job)
