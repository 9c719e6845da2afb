"""The GPU driver opens beside the command's start: with a driver slow to
initialise (the fake's `init_delay_s`), the command starts at once, a command
that ends sooner is not kept waiting for the driver, and a longer one has its
GPUs in every row and in meta.json."""
import json
import time

from conftest import ROOT

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
DELAY_S = 1.5


def slow_driver(tmp_path):
    path = tmp_path / "slow.json"
    path.write_text(json.dumps({"init_delay_s": DELAY_S,
                                "devices": [{"uuid": "GPU-slow", "name": "NVIDIA H200",
                                             "gpm": {"2": 70}}]}))
    return {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(path)}


def test_a_short_command_does_not_wait_for_the_driver(run_tv, tmp_path):
    started = time.monotonic()
    r = run_tv(["true"], "--quiet", env=slow_driver(tmp_path))
    took = time.monotonic() - started
    assert r.proc.returncode == 0, r.proc.stderr
    assert took < DELAY_S * 0.5, f"run -- true took {took:.2f} s with a {DELAY_S} s driver start"
    assert r.meta["gpus"] == []  # no GPU was read: none is claimed
    assert r.summary["exit_code"] == 0


def test_the_command_starts_before_the_driver_and_every_row_has_its_gpus(run_tv, tmp_path):
    stamp = tmp_path / "child_started"
    command = ["sh", "-c", f"date +%s.%N > {stamp}; sleep 4"]
    before = time.time()
    r = run_tv(command, "--interval", "0.5", env=slow_driver(tmp_path))
    assert r.proc.returncode == 0, r.proc.stderr
    assert float(stamp.read_text()) - before < DELAY_S * 0.5  # well before the driver is up
    rows = r.rows
    assert len(rows) >= 3
    assert all(len(row["gpus"]) == 1 for row in rows), [len(row["gpus"]) for row in rows]
    assert all("sm_active_ratio" in row["gpus"][0] for row in rows[:-1])
    assert [g["index"] for g in r.meta["gpus"]] == [0]
    assert r.meta["gpus"][0]["name"] == "NVIDIA H200"
