"""`trainvitals pick` on the fake driver: the freest GPUs by memory and the
driver's utilisation history, the reasons when too few qualify, MIG slices by
UUID, and no driver at all."""
import json
import os
import pwd
import re
import subprocess
import time

from conftest import ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"

NODE = {"driver_version": "550.54.15", "devices": [
    # busy with someone else's job
    {"uuid": "GPU-busy", "series": {"util_gpu": 90, "memory_used_bytes": 10e9},
     "processes": [{"pid": 4242, "memory_bytes": 9e9}]},
    # idle, but its memory is held
    {"uuid": "GPU-full", "series": {"util_gpu": 0, "memory_used_bytes": 80e9}},
    {"uuid": "GPU-free", "series": {"util_gpu": 0, "memory_used_bytes": 1e9}},
    {"uuid": "GPU-light", "series": {"util_gpu": 12, "memory_used_bytes": 2e9}},
    {"uuid": "GPU-mig", "mig": {"max": 7, "instances": [
        {"slot": 0, "gpu_instance_id": 1, "uuid": "MIG-held",
         "series": {"memory_total_bytes": 2e10, "memory_used_bytes": 1.5e10},
         "processes": [{"pid": 4243, "memory_bytes": 1.4e10}]},
        {"slot": 1, "gpu_instance_id": 2, "uuid": "MIG-empty",
         "series": {"memory_total_bytes": 2e10, "memory_used_bytes": 5e8}}]}}]}


def pick(tmp_path, *args, scenario=NODE):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(path)}
    return subprocess.run([cli_path(), "pick", *args], capture_output=True, text=True,
                          timeout=30, env=env)


def test_the_freest_gpus_as_the_environment_of_a_job(tmp_path):
    proc = pick(tmp_path, "2")
    assert proc.returncode == 0, proc.stderr
    # Not the full one (idle, memory held) nor the busy one; MIG slices only alone.
    assert proc.stdout == "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3\n"
    assert proc.stderr == ""


def test_limits_leave_gpus_out_and_say_why(tmp_path):
    proc = pick(tmp_path, "2", "--max-util", "10%", "--min-free-memory", "16GiB")
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == "trainvitals: pick: 1 of the 2 GPUs asked for qualify"
    assert "  GPU 0: 90 % busy, over 10 %" in lines
    assert any(l.startswith("  GPU 1: ") and l.endswith("free, under 16.0 GiB") for l in lines)
    assert "  GPU 3: 12 % busy, over 10 %" in lines
    assert "  GPU 4 MIG 2 (MIG-empty): a CUDA process sees one MIG slice at most" in lines


def test_a_mig_slice_is_picked_by_its_uuid(tmp_path):
    # The free whole GPU beats the empty slice; with it gone, the slice is the one.
    proc = pick(tmp_path, "--min-free-memory", "15GB", "--max-util", "0.05", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] is True
    [chosen] = out["chosen"]
    assert chosen["uuid"] == "GPU-free" and out["cuda_visible_devices"] == "2"
    proc = pick(tmp_path, "--min-free-memory", "85GB", "--max-util", "0.05", "--json")
    assert json.loads(proc.stdout)["ok"] is False and proc.returncode == 1
    proc = pick(tmp_path, "--max-util", "5%", "--min-free-memory", "15GB", scenario={
        "devices": [d for d in NODE["devices"] if d["uuid"] != "GPU-free"]})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=MIG-empty\n"


def test_the_json_has_every_gpus_figures(tmp_path):
    proc = pick(tmp_path, "--json")
    out = json.loads(proc.stdout)
    by_uuid = {g["uuid"]: g for g in out["gpus"]}
    assert set(by_uuid) == {"GPU-busy", "GPU-full", "GPU-free", "GPU-light", "MIG-held",
                            "MIG-empty"}  # the GPU in MIG mode is listed as its slices
    assert by_uuid["GPU-busy"]["busy_ratio"] == 0.9 and by_uuid["GPU-busy"]["processes"] == 1
    assert by_uuid["GPU-light"]["busy_ratio"] == 0.12
    assert by_uuid["GPU-free"]["memory_free_bytes"] == 80 * 2**30 - 1e9
    assert by_uuid["MIG-empty"]["busy_ratio"] is None  # MIG slices report no utilisation


def test_no_driver_no_gpu_to_pick(tmp_path):
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(tmp_path / "none" / "libnvidia-ml.so.1")}
    proc = subprocess.run([cli_path(), "pick"], capture_output=True, text=True, timeout=30,
                          env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("trainvitals: pick: no NVIDIA driver library"), proc.stderr


def test_bad_limits_are_usage_errors(tmp_path):
    proc = pick(tmp_path, "--max-util", "150%")
    assert proc.returncode == 2
    assert "--max-util 150%: expected a share such as 20% or 0.2" in proc.stderr
    assert pick(tmp_path, "0").returncode == 2
    assert pick(tmp_path, "--min-free-memory", "lots").returncode == 2


FOUR_IDLE = {"devices": [{"uuid": f"GPU-idle-{i}", "series": {"util_gpu": 0}} for i in range(4)]}


def test_ten_runs_started_together_never_share_a_gpu(tmp_path):
    scenario = tmp_path / "four.json"
    scenario.write_text(json.dumps(FOUR_IDLE))
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
           "FAKE_NVML_SCENARIO": str(scenario), "TRAINVITALS_LOCK_DIR": str(tmp_path / "locks")}
    runs = []
    for i in range(10):
        seen = tmp_path / f"seen{i}"
        runs.append((seen, subprocess.Popen(
            [cli_path(), "run", "--quiet", "--gpus", "auto:1", "--out", str(tmp_path / f"run{i}"),
             "--", "sh", "-c", f'echo "$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER" > {seen}; sleep 3'],
            env=env, stderr=subprocess.PIPE, text=True)))
    results = [(seen, p.wait(timeout=120), p.stderr.read()) for seen, p in runs]
    started = [seen.read_text().split() for seen, code, _ in results if code == 0]
    refused = [err for _, code, err in results if code != 0]
    assert len(started) == 4, results
    assert sorted(gpu for gpu, _ in started) == ["0", "1", "2", "3"]
    assert all(order == "PCI_BUS_ID" for _, order in started)
    assert len(refused) == 6
    pids = {p.pid for _, p in runs}
    for err in refused:
        assert err.startswith("trainvitals: --gpus auto:1: only 0 GPUs free: GPU "), err
        # Each holder as the kernel names it: one of the runs that started.
        holders = re.findall(r"GPU \d held by pid (\d+) \(trainvitals\), lock file of root", err)
        assert len(holders) == 4 and {int(h) for h in holders} <= pids, err
    # Each run watched the GPU it was given, and gave it back when it ended.
    for i in range(10):
        meta = tmp_path / f"run{i}" / "meta.json"
        if meta.exists():
            [gpu] = json.loads(meta.read_text())["gpus"]
            assert gpu["index"] == 0
    proc = subprocess.run([cli_path(), "pick", "4"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_pick_leaves_out_what_a_run_holds(tmp_path):
    scenario = tmp_path / "four.json"
    scenario.write_text(json.dumps(FOUR_IDLE))
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
           "FAKE_NVML_SCENARIO": str(scenario), "TRAINVITALS_LOCK_DIR": str(tmp_path / "locks")}
    seen = tmp_path / "seen"
    run = subprocess.Popen([cli_path(), "run", "--quiet", "--gpus", "auto:3", "--out",
                            str(tmp_path / "run"), "--", "sh", "-c",
                            f"echo $CUDA_VISIBLE_DEVICES > {seen}; sleep 30"], env=env)
    try:
        for _ in range(100):
            if seen.exists() and seen.read_text().strip():
                break
            time.sleep(0.1)
        held = seen.read_text().split()[0].split(",")
        proc = subprocess.run([cli_path(), "pick", "2"], env=env, capture_output=True, text=True)
        assert proc.returncode == 1
        lines = proc.stderr.splitlines()
        assert lines[0] == "trainvitals: pick: 1 of the 2 GPUs asked for qualify"
        for gpu in held:
            assert (f"  GPU {gpu}: held by pid {run.pid} (trainvitals), lock file of "
                    f"{pwd.getpwuid(os.geteuid()).pw_name}") in lines, lines
    finally:
        run.terminate()
        run.wait(timeout=30)
