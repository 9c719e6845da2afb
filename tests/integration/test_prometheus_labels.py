"""Prometheus label values from the machine: a GPU process whose kernel name (15
bytes) cuts a character in half must not break the exposition or the push, and
the names of processes outside the job stay on this machine unless asked."""
import json
import os
import pathlib
import shutil
import subprocess
import urllib.request

import pytest

from conftest import cli_path
from prom_services import free_port, need, start_pushgateway, wait_for
from test_gpus import FAKE

# 9 x "é" is 18 bytes; the kernel keeps 15: seven whole ones and half of the eighth.
CUT_NAME = "é" * 9
SHOWN = "é" * 7 + "\ufffd"


def fetch(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.read()


@pytest.fixture
def processes(tmp_path):
    """The job's command (a copy of sleep under the cut name) and another process on the GPU."""
    job = tmp_path / CUT_NAME
    shutil.copy("/bin/sleep", job)
    other_bin = tmp_path / "secret-project"
    shutil.copy("/bin/sleep", other_bin)
    other = subprocess.Popen([str(other_bin), "60"])
    comm = pathlib.Path(f"/proc/{other.pid}/comm")
    wait_for(lambda: comm.read_bytes().strip() == b"secret-project", what="the exec")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"devices": [{"processes": [
        {"pid": "job", "memory_bytes": 2e9}, {"pid": "${OTHER_PID}", "memory_bytes": 1e9}]}]}))
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
           "FAKE_NVML_SCENARIO": str(scenario), "OTHER_PID": str(other.pid)}
    yield job, env
    other.kill()
    other.wait()


def run_and_scrape(tmp_path, job, env, listen, *flags):
    port = free_port()
    args = [cli_path(), "run", "--out", str(tmp_path / f"run-{port}"), "--quiet",
            "--interval", "0.5", "--name", "labels", "--prometheus", f"{listen}:{port}", *flags,
            "--", str(job), "30"]
    proc = subprocess.Popen(args, env=env)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        text = wait_for(lambda: (lambda b: b if b"gpu_process_memory_bytes" in b else None)(
            fetch(url)), what="GPU process series")
        om = fetch(url, accept="application/openmetrics-text; version=1.0.0")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return text, om


def test_a_cut_process_name_is_valid_utf8_for_promtool_and_the_pushgateway(tmp_path, processes):
    job, env = processes
    gateway = start_pushgateway(tmp_path)
    try:
        text, om = run_and_scrape(tmp_path, job, env, "127.0.0.1", "--pushgateway", gateway.url)
        decoded = text.decode("utf-8")  # strict: any invalid byte fails here
        om.decode("utf-8")
        check = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                               capture_output=True)
        assert check.returncode == 0, check.stdout + check.stderr
        mine = [line for line in decoded.splitlines()
                if line.startswith("trainvitals_gpu_process_memory_bytes{") and 'owner="job"' in line]
        assert mine and f'name="{SHOWN}"' in mine[0], decoded
        # On loopback only this machine reads it: other processes keep their names.
        assert 'name="secret-project",owner="other"' in decoded
        # The Pushgateway took the same series (it answers 400 to invalid UTF-8), and
        # other machines read it there: no other process's name.
        pushed = wait_for(lambda: (lambda t: t if f'name="{SHOWN}"' in t else None)(
            fetch(gateway.url + "/metrics").decode("utf-8")), what="the pushed series")
        assert "secret-project" not in pushed
        assert 'owner="other"' in pushed
    finally:
        gateway.stop()


def test_other_processes_names_stay_off_a_reachable_endpoint_unless_asked(tmp_path, processes):
    job, env = processes
    text, _ = run_and_scrape(tmp_path, job, env, "0.0.0.0")
    decoded = text.decode("utf-8")
    assert 'owner="other"' in decoded and "secret-project" not in decoded
    assert f'name="{SHOWN}"' in decoded  # the job's own names are the user's
    text, _ = run_and_scrape(tmp_path, job, env, "0.0.0.0", "--prometheus-process-names")
    assert 'name="secret-project",owner="other"' in text.decode("utf-8")
