"""Cost accounting in real runs (docs/cost.md): a loop that plans 6 epochs and
stops after 3 on a fake GPU of known power and load, its figures checked
against values computed here from that power and load; a run without prices
says no money; a wrong rate stops the run before the command starts."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
SCENARIO = ROOT / "tests" / "fake_nvml" / "scenarios" / "cost.json"
ENV = {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(SCENARIO)}
GPU0_WATTS = 250  # the job's GPU: 40 % busy; GPU 1 (90 %, 400 W) is not the job's

LOOP = textwrap.dedent("""
    import time, trainvitals
    with trainvitals.monitor(total_epochs=6) as m:
        for epoch in range(3):          # stops early: 3 of the 6 planned
            m.epoch(epoch)
            for step in range(10):
                time.sleep(0.1)
                m.step(step)
    print("loop done")
""")

RATES = textwrap.dedent("""
    [cost]
    pue = 1.2
    kwh_price = 0.30
    currency = "EUR"
    gpu_hour_price = { h100 = 2.5, default = 1.0 }
""")


@pytest.fixture(scope="module")
def costed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cost")
    (tmp / "loop.py").write_text(LOOP)
    (tmp / "rates.toml").write_text(RATES)
    proc = subprocess.run([cli_path(), "run", "--out", str(tmp / "run"), "--interval", "0.5",
                           "--config", str(tmp / "rates.toml"), "--",
                           sys.executable, str(tmp / "loop.py")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **ENV})
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp / "run" / "summary.json").read_text())
    events = [json.loads(l) for l in (tmp / "run" / "events.jsonl").read_text().splitlines()]
    return proc, summary, events


def close(a, b, rel=0.06):
    return abs(a - b) <= rel * abs(b)


def test_the_jobs_gpu_hours_energy_co2e_and_money(costed):
    _, s, _ = costed
    c = s["cost"]
    duration = s["duration_s"]
    assert c["gpus_used"] == 1, c  # GPU 1 is busy, but not with the job
    assert close(c["gpu_hours"], duration / 3600, 0.001)
    assert c["busy_basis"] == "util_ratio" and c["busy_ratio"] == 0.4
    assert close(c["busy_gpu_hours"], 0.4 * duration / 3600, 0.001)
    assert close(c["wasted_gpu_hours"], 0.6 * duration / 3600, 0.001)
    # The held time that did not train, from where the time went: no overlap.
    lost = c.get("lost", {})
    assert "idle_ratio" not in lost and sum(lost.values()) <= 1.0, lost
    for key, value in lost.items():
        assert value == s["health"]["goodput"]["ratios"][key.removesuffix("_ratio")], key
    # 250 W for the whole run, from its first instant.
    assert close(c["gpu_energy_kwh"], GPU0_WATTS * duration / 3.6e6)
    cpu_kwh = c.get("cpu_energy_kwh", 0)
    assert close(c["energy_kwh"], (c["gpu_energy_kwh"] + cpu_kwh) * 1.2, 0.001)
    assert close(c["co2e_kg"], c["energy_kwh"] * 475 / 1000, 0.001)
    assert c["co2e_estimate"] is True and c["grid_g_per_kwh"] == 475
    assert c["currency"] == "EUR"
    assert close(c["money_gpu_hours"], c["gpu_hours"] * 2.5, 0.001)  # "h100" matches the model
    assert close(c["money_energy"], c["energy_kwh"] * 0.30, 0.001)
    assert close(c["money"], c["money_gpu_hours"] + c["money_energy"], 0.001)


def test_each_epoch_is_costed_and_the_whole_run_forecast(costed):
    proc, s, events = costed
    c = s["cost"]
    assert [e["epoch"] for e in c["epochs"]] == [0, 1, 2]
    for e, record in zip(c["epochs"], s["epochs"]):
        assert record["planned_epochs"] == 6
        assert close(e["gpu_hours"], record["duration_s"] / 3600, 0.001)
        assert close(e["busy_gpu_hours"], 0.4 * record["duration_s"] / 3600, 0.001)
        assert close(e["energy_kwh"], GPU0_WATTS * record["duration_s"] / 3.6e6 * 1.2, 0.12)
    f = c["forecast"]
    assert f["planned_epochs"] == 6 and f["epochs_done"] == 3
    mean = sum(e["duration_s"] for e in c["epochs"]) / 3
    assert close(f["duration_s"], s["duration_s"] + 3 * mean, 0.01)
    mean_kwh = sum(e["energy_kwh"] for e in c["epochs"]) / 3
    assert close(f["energy_kwh"], c["energy_kwh"] + 3 * mean_kwh, 0.01)
    # Live: a forecast after each epoch; the terminal hears of the first.
    live = [e for e in events if e["type"] == "cost_forecast"]
    assert [e["epochs_done"] for e in live] == [1, 2, 3]
    assert live[0]["currency"] == "EUR" and live[0]["planned_epochs"] == 6
    said = [l for l in proc.stderr.splitlines() if "forecast for all 6 epochs" in l]
    assert len(said) == 1 and said[0].startswith("trainvitals: forecast for all 6 epochs (after 1):")
    lines = proc.stderr.splitlines()
    assert lines.index(said[0]) < next(i for i, l in enumerate(lines) if "epoch 1:" in l)
    cost_lines = [l for l in lines if l.startswith("  Cost ")]
    assert cost_lines[0].startswith("  Cost     1 GPU held "), cost_lines
    assert "40% busy" not in cost_lines[0] and "(40%)" in cost_lines[0]
    assert any(l.endswith("EUR)") for l in cost_lines), cost_lines
    assert any(l.startswith("  Forecast all 6 epochs would have taken") for l in lines)


def test_without_prices_no_money_is_said(run_tv, tmp_path):
    r = run_tv([sys.executable, "-c", "import time; time.sleep(1.5)"], "--interval", "0.5",
               env=ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    c = r.summary["cost"]
    assert "money" not in c and "currency" not in c
    assert c["gpus_used"] == 1 and c["energy_kwh"] > 0
    assert "EUR" not in r.proc.stderr and "USD" not in r.proc.stderr
    assert "forecast" not in c  # no epochs planned


def test_a_wrong_rate_stops_before_the_command_starts(tmp_path):
    rates = tmp_path / "rates.toml"
    rates.write_text("[cost]\npue = 0.8\n")
    marker = tmp_path / "ran"
    proc = subprocess.run([cli_path(), "run", "--out", str(tmp_path / "run"), "--config",
                           str(rates), "--", "touch", str(marker)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"trainvitals: {rates}:2: cost.pue: 0.8 is out of range: "
                                   "expected the site's power usage effectiveness, 1 to 5")
    assert not marker.exists()
