"""Acting before the OOM: under `trainvitals run`, a fake GPU whose job memory
grows linearly (fake NVML driver) makes the analysis open gpu-memory-leak and
oom-forecast; the risk travels back through the step slots, and each
framework's callback (and a plain PyTorch loop) acts on it as on_oom_risk= says:
"stop" ends the training before its planned epochs, "checkpoint" leaves a
checkpoint the framework loads back, a function receives the forecast, the
default warns in one line; a run whose memory stays flat triggers nothing."""
import json
import os

import pytest

from conftest import HELPERS, Run, cli_path
from test_findings import FAKE, PY_ENV
import subprocess
import sys

PLANNED = 60
# 8 GB of GPU memory; the job's grows 140 MB/s from 1 GB: with 1 s epochs the
# leak shows after about 7 epochs and the memory runs out well before epoch 60.
LEAK = {"devices": [{"uuid": "GPU-oom-0",
                     "series": {"util_gpu": 90, "memory_total_bytes": 8e9,
                                "memory_used_bytes": [[0, 1.3e9], [50, 8.3e9]]},
                     "processes": [{"pid": "job", "memory_bytes": [[0, 1e9], [50, 8e9]]}]}]}
FLAT = {"devices": [{"uuid": "GPU-oom-0",
                     "series": {"util_gpu": 90, "memory_total_bytes": 8e9,
                                "memory_used_bytes": 3.3e9},
                     "processes": [{"pid": "job", "memory_bytes": 3e9}]}]}
CONFIG = "interval = 0.5\n\n[findings]\nleak_warmup_s = 2\nopen_s = 2\nhold_s = 300\n"


@pytest.fixture
def train(tmp_path):
    """Runs helpers/oom_train.py under `trainvitals run` with the fake GPU `scenario`."""

    def run(framework, action, scenario=LEAK, max_s=45, name="run"):
        config = tmp_path / "config.toml"
        config.write_text(CONFIG)
        path = tmp_path / f"{name}-scenario.json"
        path.write_text(json.dumps(scenario))
        env = {**os.environ, **PY_ENV, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
               "FAKE_NVML_SCENARIO": str(path)}
        env.pop("TRAINVITALS_CONFIG", None)
        out = tmp_path / name
        result = tmp_path / f"{name}-result.json"
        args = [cli_path(), "run", "--quiet", "--config", str(config), "--out", str(out), "--",
                sys.executable, str(HELPERS / "oom_train.py"), "--framework", framework,
                "--action", action, "--epochs", str(PLANNED), "--max-s", str(max_s),
                "--result", str(result)]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=180, env=env)
        assert proc.returncode == 0, proc.stderr
        r = Run(proc, out)
        r.result = json.loads(result.read_text())
        return r

    return run


def risk_lines(r):
    return [line for line in r.proc.stderr.splitlines()
            if line.startswith(("trainvitals: gpu-memory-leak:", "trainvitals: oom-forecast:"))]


def opened(r):
    return {e["id"] for e in r.events if e["type"] == "finding_open"}


def planned_in_events(r):
    return {e.get("epochs") for e in r.events if e["type"] == "epoch_begin"}


def load(framework, path):
    proc = subprocess.run([sys.executable, str(HELPERS / "oom_train.py"), "--framework",
                           framework, "--load", str(path)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **PY_ENV})
    assert proc.returncode == 0 and "loaded" in proc.stdout, proc.stderr


FRAMEWORKS = ["torch", "keras", "lightning", "paddle"]
# make test checks each action with torch; make test-slow with the others too.
TORCH_THEN_SLOW = ["torch", *(pytest.param(f, marks=pytest.mark.slow) for f in FRAMEWORKS[1:])]
CHECKPOINTS = {"torch": "loop_checkpoint.pt", "keras": "oom_checkpoint.keras",
               "lightning": "oom_checkpoint.ckpt", "paddle": "oom_checkpoint.pdparams"}


@pytest.mark.parametrize("framework", TORCH_THEN_SLOW)
def test_stop_ends_the_training_before_its_planned_epochs(train, framework):
    r = train(framework, "stop")
    assert "gpu-memory-leak" in opened(r), r.proc.stderr
    assert planned_in_events(r) == {PLANNED}  # the framework's plan reached the analysis
    # The leak is said; the forecast inside the planned run stops the training.
    lines = [x for x in risk_lines(r) if x.startswith("trainvitals: oom-forecast:")]
    assert lines and all('stopping the training (on_oom_risk="stop")' in x for x in lines), \
        r.proc.stderr
    # Stopped by the risk, long before the planned 60 epochs and the script's own cap.
    assert 3 <= r.result["epochs_run"] < 30, r.result
    if framework == "torch":
        assert r.result["should_stop"] is True


@pytest.mark.parametrize("framework", TORCH_THEN_SLOW)
def test_checkpoint_leaves_a_checkpoint_the_framework_loads(train, framework):
    # The forecast comes within about 8 s for PyTorch (the stop test above).
    r = train(framework, "checkpoint", max_s=20 if framework == "torch" else 30)
    path = r.out / CHECKPOINTS[framework]
    assert path.exists(), r.proc.stderr
    assert any("saved a checkpoint" in x for x in risk_lines(r)), r.proc.stderr
    load(framework, path)


def test_a_function_receives_the_forecast(train):
    r = train("torch", "callable")
    got = r.result["received"]
    assert got, r.proc.stderr
    forecast = [x for x in got if x["kind"] == "oom-forecast"]
    assert forecast, got
    f = forecast[-1]
    assert f["gpu"] == 0 and f["planned_epochs"] == PLANNED
    assert 0 < f["epoch"] < PLANNED and 0 < f["seconds_left"] < 60
    assert 1e8 < f["growth_bytes_per_second"] < 2e8  # the scenario's 140 MB/s
    assert f["message"].startswith("GPU 0 memory grows ") and f"of {PLANNED}, in about" in \
        f["message"], f
    assert all(x["kind"] == "oom-forecast" for x in got)  # a leak alone is only said
    # The function is the action on the forecast: no forecast line of ours.
    assert not [x for x in risk_lines(r) if x.startswith("trainvitals: oom-forecast:")]


def test_the_default_warns_in_one_line_per_risk(train):
    r = train("torch", "warn", max_s=25)
    lines = risk_lines(r)
    assert 1 <= len(lines) <= 2, r.proc.stderr  # the leak, and the forecast when it comes apart
    assert all(" memory grows " in x for x in lines)
    assert r.result["epochs_run"] >= 15  # warned, not stopped

    # The forecast names the epoch the GPU really fills in, within one: the
    # truth is where the used memory the rows show reaches the GPU's total,
    # counted in the epochs the training marked.
    [fc] = [e for e in r.events if e["type"] == "finding_open" and e["id"] == "oom-forecast"]
    points = [(row["t"], row["gpus"][0]["memory_used_bytes"]) for row in r.rows
              if row.get("gpus") and "memory_used_bytes" in row["gpus"][0]]
    (t0, m0), (t1, m1) = points[len(points) // 3], points[-1]
    full_t = t0 + (8e9 - m0) * (t1 - t0) / (m1 - m0)
    begins = sorted(e["t"] for e in r.events if e["type"] == "epoch_begin")
    length = sorted(b - a for a, b in zip(begins, begins[1:]))[len(begins) // 2]
    true_epoch = int((full_t - begins[0]) // length) + 1
    print(f"forecast: epoch {fc['evidence']['oom_epoch']}; the GPU fills in epoch {true_epoch}")
    assert abs(fc["evidence"]["oom_epoch"] - true_epoch) <= 1, (fc["evidence"], true_epoch)
    assert fc["evidence"]["planned_epochs"] == PLANNED


@pytest.mark.parametrize("framework", ["torch", pytest.param("keras", marks=pytest.mark.slow)])
def test_a_healthy_run_triggers_nothing(train, framework):
    r = train(framework, "stop", scenario=FLAT, max_s=20)
    assert not opened(r) & {"gpu-memory-leak", "oom-forecast", "host-memory-leak"}, r.events
    assert not risk_lines(r), r.proc.stderr
    assert r.result["epochs_run"] >= 10


def test_alone_the_in_process_sampler_tells_the_loop_too(tmp_path):
    """No `trainvitals run`: the monitor's own sampler finds the leak and the
    same back-channel stops the loop; the checkpoint lands in its run directory."""
    leak = json.loads(json.dumps(LEAK))
    leak["devices"][0]["processes"][0]["pid"] = "${OOM_TRAIN_PID}"  # the script itself
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(leak))
    env = {**os.environ, **PY_ENV, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
           "FAKE_NVML_SCENARIO": str(scenario)}
    for name in ("TRAINVITALS_CONFIG", "TRAINVITALS_SOCKET", "TRAINVITALS_RUN_DIR"):
        env.pop(name, None)
    out, result = tmp_path / "alone", tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(HELPERS / "oom_train.py"), "--framework", "torch",
                           "--action", "stop", "--epochs", str(PLANNED), "--max-s", "50",
                           "--out", str(out), "--result", str(result)],
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(result.read_text())
    assert got["should_stop"] is True and 3 <= got["epochs_run"] < 30, (got, proc.stderr)
    events = Run(proc, out).events
    assert {e.get("epochs") for e in events if e["type"] == "epoch_begin"} == {PLANNED}


@pytest.mark.parametrize("options, said", [
    ({"on_oom_risk": "explode"}, "on_oom_risk='explode'"),
    ({"on_oom_risk": "checkpoint"}, "needs checkpoint="),
    ({"on_oom_risk": "stop", "checkpoint": 3}, "checkpoint=3"),
    ({"total_epochs": 0}, "total_epochs=0"),
    ({"total_epochs": 2.5}, "total_epochs=2.5"),
    ({"memory_snapshot": "yes"}, "memory_snapshot='yes'"),
    ({"memory_snapshot": True}, "records PyTorch's CUDA allocator"),
])
def test_a_bad_value_is_a_config_error_when_the_monitor_is_made(options, said):
    code = ("import sys, trainvitals\n"
            f"try:\n    trainvitals.monitor(**{options!r})\n"
            "except trainvitals._core.ConfigError as e:\n    print(e); sys.exit(0)\n"
            "sys.exit(1)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **PY_ENV})
    assert proc.returncode == 0 and said in proc.stdout, (proc.stdout, proc.stderr)


def test_keras_callback_refuses_a_bad_value_before_training():
    code = ("import sys\nfrom trainvitals.keras import VitalsCallback\nimport trainvitals\n"
            "try:\n    VitalsCallback(on_oom_risk='later')\n"
            "except trainvitals._core.ConfigError as e:\n    print(e); sys.exit(0)\n"
            "sys.exit(1)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **PY_ENV})
    assert proc.returncode == 0 and "on_oom_risk='later'" in proc.stdout, proc.stderr


def test_planned_epochs_count_from_the_calls_first_epoch(tmp_path):
    """epoch_begin's `epochs`: a call resumed at epoch 10 of 50 plans 40 more
    (Keras fit(epochs=50, initial_epoch=10)); total_epochs= serves a plain loop
    as a count, however it numbers its epochs (here from 1); Lightning's -1 (no
    limit) says nothing."""
    out = tmp_path / "run"
    code = ("import trainvitals\n"
            f"m = trainvitals.monitor(out={str(out)!r}, quiet=True, total_epochs=3)\n"
            "m.epoch(1); m.epoch(2)\n"
            "m.end_call(); m.begin_call(); m.epoch_begin(10, epochs=50)\n"
            "m.end_call(); m.begin_call(); m.epoch_begin(0, epochs=-1)\n"
            "m.close()\n")
    env = {**os.environ, **PY_ENV}
    for name in ("TRAINVITALS_CONFIG", "TRAINVITALS_SOCKET", "TRAINVITALS_RUN_DIR"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    begins = [e for e in Run(proc, out).events if e["type"] == "epoch_begin"]
    # The last call (its 0 recorded as 11, after 10) falls back from -1 to
    # total_epochs=3.
    assert [(e["epoch"], e.get("epochs")) for e in begins] == [(1, 3), (2, 3), (10, 40), (11, 3)]
