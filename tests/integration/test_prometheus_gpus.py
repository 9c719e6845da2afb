"""`--prometheus` with the fake NVML driver: GPU series carry gpu, gpu_model and mig labels."""
import json
import os
import subprocess
import sys

from conftest import cli_path
from prom_services import free_port, http_get, need, wait_for
from test_gpus import FAKE, SCENARIOS


def scrape_with_gpus(tmp_path, scenario_path, extra_env=None, want="trainvitals_gpu_"):
    port = free_port()
    env = {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(scenario_path),
           **(extra_env or {})}
    args = [cli_path(), "run", "--out", str(tmp_path / "run"), "--quiet", "--interval", "0.5",
            "--prometheus", str(port), "--", sys.executable, "-c", "import time; time.sleep(30)"]
    proc = subprocess.Popen(args, env={**os.environ, **env})
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        def gpu_scrape():
            text = http_get(url)[2]
            return text if want in text else None

        text = wait_for(gpu_scrape, what="GPU series")
        meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    check = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    return text, meta


def test_gpu_series_are_labelled_by_index_and_model(tmp_path):
    text, meta = scrape_with_gpus(tmp_path, SCENARIOS / "two_gpus.json")
    model = meta["gpus"][0]["name"]
    assert model
    for gpu in ("0", "1"):
        assert f'gpu="{gpu}",gpu_model="{model}"}}' in text, text
    assert "# TYPE trainvitals_gpu_energy_joules_total counter" in text
    assert 'mig="' not in text


def test_mig_slices_get_a_mig_label(tmp_path):
    scenario = {"devices": [{"uuid": "GPU-mig", "mig": {"max": 7, "instances": [
        {"slot": 0, "gpu_instance_id": 1, "uuid": "MIG-a",
         "series": {"memory_total_bytes": 2e10, "memory_used_bytes": 5e9}},
        {"slot": 3, "gpu_instance_id": 5, "uuid": "MIG-b",
         "series": {"memory_total_bytes": 2e10}}]}}]}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    text, _ = scrape_with_gpus(tmp_path, path)
    used = [line for line in text.splitlines()
            if line.startswith("trainvitals_gpu_memory_used_bytes{")]
    assert any('mig="1"} 5000000000' in line for line in used), used
    assert any('mig="5"}' in line for line in used), used


def test_per_process_series_say_whose_process_it_is(tmp_path):
    other = subprocess.Popen(["sleep", "60"])
    try:
        scenario = {"devices": [{"uuid": "GPU-procs", "processes": [
            {"pid": "job", "memory_bytes": 4e9, "sm_util": 70},
            {"pid": "${OTHER_PID}", "memory_bytes": 1e9}]}]}
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario))
        text, meta = scrape_with_gpus(tmp_path, path, {"OTHER_PID": str(other.pid)},
                                      want="trainvitals_gpu_process_memory_bytes{")
    finally:
        other.kill()
        other.wait()
    model = meta["gpus"][0]["name"]
    mem = [line for line in text.splitlines()
           if line.startswith("trainvitals_gpu_process_memory_bytes{")]
    assert len(mem) == 2, text
    job = [line for line in mem if 'owner="job"' in line]
    assert len(job) == 1 and job[0].endswith(" 4000000000"), mem
    assert f'gpu="0",gpu_model="{model}",pid="' in job[0], job
    assert (f'pid="{other.pid}",name="sleep",owner="other"}} 1000000000') in text, mem
    assert text.count("# TYPE trainvitals_gpu_process_memory_bytes gauge") == 1
