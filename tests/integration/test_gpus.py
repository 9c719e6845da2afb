"""`trainvitals run` against the fake NVML driver library (tests/fake_nvml):
the same dlopen path as a real driver, with scripted GPU scenarios."""
import json
import pathlib
import subprocess
import sys

import pytest

from conftest import ROOT, cli_path

BUILD = ROOT / "build" / "release" / "tests" / "fake_nvml"
FAKE = BUILD / "fake_nvml" / "libnvidia-ml.so.1"
FAKE_OLD = BUILD / "fake_nvml_old" / "libnvidia-ml.so.1"
SCENARIOS = ROOT / "tests" / "fake_nvml" / "scenarios"
SLEEP = [sys.executable, "-c", "import time; time.sleep(3.2)"]


@pytest.fixture
def gpu_run(run_tv, tmp_path):
    def run(scenario, command=SLEEP, library=FAKE, extra_env=None, flags=()):
        if isinstance(scenario, dict):
            path = tmp_path / "scenario.json"
            path.write_text(json.dumps(scenario))
        else:
            path = SCENARIOS / scenario
        env = {"TRAINVITALS_NVML_LIBRARY": str(library), "FAKE_NVML_SCENARIO": str(path),
               **(extra_env or {})}
        r = run_tv(command, "--interval", "0.5", *flags, env=env)
        assert r.proc.returncode == 0, r.proc.stderr
        return r

    return run


def gpu_rows(r, index=0, mig=None):
    out = []
    for row in r.rows:
        for g in row["gpus"]:
            if g["index"] == index and g.get("mig") == mig:
                out.append(g)
    return out


def test_two_gpus_are_recorded_with_the_jobs_share(gpu_run):
    r = gpu_run("two_gpus.json")
    gpus = r.meta["gpus"]
    assert [g["index"] for g in gpus] == [0, 1]
    assert all(not g["id"].startswith("GPU-") for g in gpus)  # a hash, not the UUID
    assert all("uuid" not in g and "serial" not in g for g in gpus)
    assert gpus[0]["energy_source"] == "counter"
    g0, g1 = gpu_rows(r, 0), gpu_rows(r, 1)
    assert len(g0) >= 5 and len(g1) >= 5
    assert g0[-1]["job_memory_bytes"] == 4_000_000_000
    assert g0[-1]["job_memory_bytes"] <= g0[-1]["memory_used_bytes"]  # a job holds part of it
    assert g1[-1]["job_memory_bytes"] == 0
    full = g0[-2]  # the last full interval (the final row may be partial)
    for key in ("util_ratio", "memory_used_bytes", "memory_total_bytes", "temperature_celsius",
                "power_watts", "energy_joules", "sm_clock_hertz", "performance_state"):
        assert key in full, key
    assert g0[-1]["power_watts"] == pytest.approx(300, rel=0.01)
    s = r.summary
    assert len(s["gpus"]) == 2
    assert s["gpus"][0]["energy_joules"] > 0
    assert "GPU0" in r.proc.stderr and "GPU1" in r.proc.stderr


def test_real_ids_only_when_asked(gpu_run):
    r = gpu_run("two_gpus.json", flags=("--gpu-ids",))
    assert r.meta["gpus"][0]["uuid"] == "GPU-0a0a0a0a-two-0"


def test_a_leak_shows_as_growing_job_memory(gpu_run):
    r = gpu_run("leak.json")
    job = [g["job_memory_bytes"] for g in gpu_rows(r, 0) if "job_memory_bytes" in g]
    assert len(job) >= 5
    assert job[-1] > job[1] + 1e9  # about 1 GB/s over ~3 s
    assert job == sorted(job)


def test_throttling_is_recorded_as_fractions_of_time(gpu_run):
    r = gpu_run("throttle.json", command=[sys.executable, "-c", "import time; time.sleep(4.5)"])
    rows = gpu_rows(r, 0)
    assert max(g.get("throttle_power_ratio", 0) for g in rows) > 0.5
    assert r.summary["gpus"][0]["throttle_any_ratio"]["mean"] > 0
    assert "throttled" in r.proc.stderr


def test_a_gpu_lost_mid_run_is_an_event_and_the_run_goes_on(gpu_run):
    scenario = {"devices": [{"uuid": "GPU-lost", "lost_from_s": 1.2}, {"uuid": "GPU-fine"}]}
    r = gpu_run(scenario)
    events = [e for e in r.events if e["type"] == "source_unavailable"]
    assert any("lost" in e["message"].lower() for e in events), events
    late = r.rows[-1]
    assert [g["index"] for g in late["gpus"]] == [1]
    assert late["job"]["processes"] >= 1  # host and job sampling went on
    assert r.summary["exit_code"] == 0


def test_a_driver_without_energy_counter_or_v3_call_still_gives_energy_and_job_memory(gpu_run):
    scenario = {"devices": [{"uuid": "GPU-old", "series": {"power_mw": 200000},
                             "processes": [{"pid": "job", "memory_bytes": 2e9}]}]}
    r = gpu_run(scenario, library=FAKE_OLD)
    assert r.meta["gpus"][0]["energy_source"] == "integrated"
    g = gpu_rows(r, 0)
    assert g[-1]["job_memory_bytes"] == 2_000_000_000
    assert 0 < r.summary["gpus"][0]["energy_joules"] <= 200 * 4.0


def test_mig_slices_are_rows_of_their_own(gpu_run):
    scenario = {"devices": [{"uuid": "GPU-mig", "mig": {"max": 7, "instances": [
        {"slot": 0, "gpu_instance_id": 1, "uuid": "MIG-a", "series": {"memory_total_bytes": 2e10,
                                                                      "memory_used_bytes": 5e9}},
        {"slot": 3, "gpu_instance_id": 5, "uuid": "MIG-b", "series": {"memory_total_bytes": 2e10}}]}}]}
    r = gpu_run(scenario)
    migs = {g.get("mig") for row in r.rows for g in row["gpus"]}
    assert migs == {None, 1, 5}
    assert gpu_rows(r, 0, mig=1)[-1]["memory_used_bytes"] == 5_000_000_000


def test_cuda_visible_devices_numbers_gpus_as_the_framework_does(gpu_run):
    r = gpu_run("two_gpus.json", extra_env={"CUDA_VISIBLE_DEVICES": "1"})
    gpus = r.meta["gpus"]
    assert len(gpus) == 1
    assert gpus[0]["index"] == 0 and gpus[0]["physical_index"] == 1


def test_gpus_naming_a_gpu_the_job_does_not_see_is_a_usage_error(run_tv):
    env = {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(SCENARIOS / "two_gpus.json")}
    r = run_tv(["true"], "--gpus", "0,5", env=env)
    assert r.proc.returncode == 2, r.proc.stderr
    assert "--gpus: there is no GPU 5: the job sees 2 GPUs (0, 1)" in r.proc.stderr
    assert "CUDA_VISIBLE_DEVICES" not in r.proc.stderr  # it is unset: not the cause
    assert not (r.out / "samples.jsonl").exists()
    r = run_tv(["true"], "--gpus", "1", env={**env, "CUDA_VISIBLE_DEVICES": "1"}, name="cvd")
    assert r.proc.returncode == 2
    assert "the job sees 1 GPU (0) with CUDA_VISIBLE_DEVICES='1'" in r.proc.stderr
    # Long enough for the driver to open: a command that ends first has no GPU.
    r = run_tv(["sleep", "0.3"], "--gpus", "1", env=env, name="fine")
    assert r.proc.returncode == 0, r.proc.stderr
    assert [g["index"] for g in r.meta["gpus"]] == [1]


def test_no_permission_says_what_is_missing(gpu_run):
    scenario = {"devices": [{"uuid": "GPU-x", "errors": {
        "nvmlDeviceGetComputeRunningProcesses_v3": "NO_PERMISSION"}}]}
    r = gpu_run(scenario)
    messages = " ".join(e.get("message", "") for e in r.events)
    assert "permission" in messages.lower(), messages
    assert "util_ratio" in gpu_rows(r, 0)[-1]  # everything else still read


def test_no_driver_library_means_host_only_with_one_clear_line(run_tv, tmp_path):
    r = run_tv(SLEEP[:2] + ["import time; time.sleep(1.2)"],
               env={"TRAINVITALS_NVML_LIBRARY": str(tmp_path / "missing" / "libnvidia-ml.so.1")})
    assert r.proc.returncode == 0
    lines = [l for l in r.proc.stderr.splitlines() if "GPU" in l or "NVIDIA" in l]
    assert len(lines) == 1, r.proc.stderr
    assert all(row["gpus"] == [] for row in r.rows)
    assert r.rows[-1]["host"]["memory_used_bytes"] > 0


def test_check_lists_gpus_and_what_each_supports(tmp_path):
    env = {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(SCENARIOS / "two_gpus.json")}
    import os
    proc = subprocess.run([cli_path(), "check", "--json"], capture_output=True, text=True,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["gpu"]["nvml"]["found"] is True
    assert len(report["gpu"]["gpus"]) == 2
    assert report["gpu"]["driver_version"] == "550.54.15"
    text = subprocess.run([cli_path(), "check"], capture_output=True, text=True,
                          env={**os.environ, **env}).stdout
    assert "GPU0" in text and "NVIDIA H100" in text


def test_tensorboard_has_a_run_of_gpu_tags_in_mib(gpu_run, tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    logdir = tmp_path / "tb"
    r = gpu_run("two_gpus.json", flags=("--tensorboard", str(logdir)))
    acc = accumulator.EventAccumulator(str(logdir / "system"), size_guidance={"scalars": 0})
    acc.Reload()
    tags = acc.Tags()["scalars"]
    for tag in ("gpu0/util_ratio", "gpu0/util_ratio_max", "gpu0/memory_used_mib",
                "gpu0/job_memory_mib", "gpu0/power_watts", "gpu0/power_watts_max",
                "gpu1/util_ratio", "gpu0/temperature_celsius"):
        assert tag in tags, tags
    assert "gpu0/temperature_celsius_max" not in tags
    g0 = gpu_rows(r, 0)
    job = acc.Scalars("gpu0/job_memory_mib")
    assert len(job) == len(g0)
    assert job[-1].value == pytest.approx(4_000_000_000 / 2**20)
    util = acc.Scalars("gpu1/util_ratio")
    assert [e.value for e in util] == pytest.approx([g["util_ratio"] for g in gpu_rows(r, 1)], abs=1e-4)
    steps = [e.step for e in util]
    assert steps == sorted(set(steps))


def test_allocator_figures_join_their_gpu_and_the_epoch_records(gpu_run):
    """A framework's allocator figures (here made up by the script, on the fake
    driver's GPU 1) land on that GPU's rows and in each epoch's record."""
    script = [sys.executable, str(ROOT / "tests" / "integration" / "helpers" / "markers_script.py"),
              "--steps", "40", "--allocator-device", "1"]
    r = gpu_run("two_gpus.json", command=script,
                extra_env={"PYTHONPATH": str(ROOT / "python")})
    g1 = [g for g in gpu_rows(r, 1) if "allocator_allocated_bytes" in g]
    assert g1, "no row of GPU 1 has allocator figures"
    allocated = [g["allocator_allocated_bytes"] for g in g1]
    assert allocated == sorted(allocated) and allocated[-1] > allocated[0]
    assert all(g["allocator_peak_bytes"] == g["allocator_allocated_bytes"] + 50e6 for g in g1)
    assert all("allocator_allocated_bytes" not in g for g in gpu_rows(r, 0))
    epochs = r.summary["epochs"]
    assert len(epochs) == 3
    for e in epochs:
        gpus = {g["index"]: g for g in e["gpus"]}
        assert gpus[1]["allocator_peak_bytes"] >= 250e6, e
        assert "allocator_peak_bytes" not in gpus[0]
        assert gpus[0]["energy_joules"] > 0 and gpus[0]["util_ratio_mean"] >= 0
    assert "alloc peak" in r.proc.stderr  # the epoch line shows it


def test_energy_counts_from_when_monitoring_began(gpu_run):
    # 350 W for the whole run: the energy is 350 W times the time watched, the
    # first interval included (the first row is not 0 J).
    r = gpu_run({"devices": [{"series": {"power_mw": 350000}}]},
                command=[sys.executable, "-c", "import time; time.sleep(7)"])
    g = gpu_rows(r, 0)
    assert g[0]["energy_joules"] > 0.5 * 350 * 0.5, g[0]
    duration = r.summary["duration_s"]
    assert 7 <= duration < 9
    assert r.summary["gpus"][0]["energy_joules"] == pytest.approx(350 * duration, rel=0.03)
