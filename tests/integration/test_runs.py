"""The run history: every finished run lands in runs.db, and `trainvitals runs`
lists, adds up and imports them (real CLI, real runs, real SQLite files)."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, cli_path


def tv_cmd(tv, *args, env=None, timeout=60):
    return subprocess.run([tv, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def runs_json(tv, db, *args):
    limit = [] if "--limit" in args else ["--limit", "0"]
    p = tv_cmd(tv, "runs", "--db", db, "--json", *limit, *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["runs"]


def old_run(root, name, *, start_t, duration_s, utils, host="node1", command=None, findings=(),
            exit_code=0, cost=None):
    """A run directory as a run before cost accounting wrote it: no "cost"."""
    d = root / name
    d.mkdir(parents=True)
    command = command or ["python", f"{name}.py"]
    meta = {"schema_version": 1, "mode": "run", "command": command, "host": host,
            "start_t": start_t, "gpus": [{"index": i, "name": "NVIDIA A100-SXM4-80GB"}
                                         for i in range(len(utils))]}
    summary = {"schema_version": 1, "command": command, "run_dir": str(d), "start_t": start_t,
               "end_t": start_t + duration_s, "duration_s": duration_s, "exit_code": exit_code,
               "exit_signal": None, "host": {}, "job": {"memory_bytes": {"mean": 1e9, "max": 2e9}},
               "gpus": [{"index": i, "physical_index": i,
                         "util_ratio": {"mean": u, "max": 1.0},
                         "memory_used_bytes": {"mean": 1e9, "max": 4e9 + i}}
                        for i, u in enumerate(utils)],
               "epochs": [], "phases": {},
               "findings": [{"id": f, "severity": "warning"} for f in findings],
               "health": {"score": 80}}
    if cost is not None:
        summary["cost"] = cost
    (d / "meta.json").write_text(json.dumps(meta))
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def test_twenty_runs_ending_together_all_land(tv, tmp_path):
    db = tmp_path / "history" / "runs.db"
    procs = [subprocess.Popen([tv, "run", "--quiet", "--db", str(db), "--out",
                               str(tmp_path / f"r{i:02}"), "--", "sleep", "0.3"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(20)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == "", err
    runs = runs_json(tv, db)
    assert sorted(r["run_dir"] for r in runs) == [str(tmp_path / f"r{i:02}") for i in range(20)]
    for r in runs:
        assert r["command"] == ["sleep", "0.3"]
        assert r["name"] == "sleep"
        assert r["exit_code"] == 0
        assert 0.2 < r["duration_s"] < 30
        assert r["missing"] is False


def test_a_corrupt_database_costs_the_run_nothing_but_one_line(tv, tmp_path):
    db = tmp_path / "runs.db"
    garbage = b"this is not an SQLite file " * 200
    db.write_bytes(garbage)
    out = tmp_path / "run"
    p = tv_cmd(tv, "run", "--quiet", "--db", db, "--out", out, "--", "sh", "-c", "exit 3")
    assert p.returncode == 3
    assert (out / "summary.json").exists()
    assert p.stderr.splitlines() == [
        f"trainvitals: run history: {db}: file is not a database; this run is not indexed"]
    assert db.read_bytes() == garbage
    # The same from the config file's db key.
    config = tmp_path / "tv.toml"
    config.write_text(f'db = "{db}"\n')
    p = tv_cmd(tv, "run", "--quiet", "--config", config, "--out", tmp_path / "run2", "--", "true")
    assert p.returncode == 0
    assert "this run is not indexed" in p.stderr


def test_a_run_on_a_gpu_is_indexed_with_its_cost(tv, tmp_path):
    db = tmp_path / "runs.db"
    out = tmp_path / "gpu"
    build = ROOT / os.environ.get("TRAINVITALS_BUILD", "build/release")
    env = {"TRAINVITALS_NVML_LIBRARY": str(build / "tests" / "fake_nvml" / "fake_nvml" /
                                           "libnvidia-ml.so.1"),
           "FAKE_NVML_SCENARIO": str(ROOT / "tests" / "fake_nvml" / "scenarios" / "two_gpus.json")}
    p = tv_cmd(tv, "run", "--quiet", "--db", db, "--out", out, "--interval", "0.5", "--",
               "sleep", "1.5", env=env)
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "summary.json").read_text())
    meta = json.loads((out / "meta.json").read_text())
    cost = summary["cost"]
    [r] = runs_json(tv, db)
    assert r["gpu_count"] == cost["gpus_used"]
    assert r["gpu_models"] == ", ".join(dict.fromkeys(g["name"] for g in meta["gpus"]))
    for key in ("gpu_hours", "busy_gpu_hours", "wasted_gpu_hours", "busy_ratio", "energy_kwh",
                "gpu_energy_kwh", "co2e_kg"):
        assert r[key] == cost.get(key), key
    # util_ratio over the GPUs the job used (docs/cost.md), as the cost counts them.
    listed = any("job_processes" in g for g in summary["gpus"])
    used = [g for g in summary["gpus"] if not listed or g["job_processes"]["max"] > 0
            or g.get("job_memory_bytes", {}).get("max", 0) > 0]
    assert len(used) == cost["gpus_used"]
    assert r["gpu_util_ratio_mean"] == pytest.approx(
        sum(g["util_ratio"]["mean"] for g in used) / len(used))
    assert r["gpu_memory_bytes_max"] == max(g["memory_used_bytes"]["max"]
                                            for g in summary["gpus"])


def test_an_attached_process_is_indexed_when_it_exits(tv, tmp_path):
    db = tmp_path / "runs.db"
    target = subprocess.Popen(["sleep", "1.5"])
    try:
        p = tv_cmd(tv, "attach", "--quiet", "--db", db, "--out", tmp_path / "att",
                   target.pid)
    finally:
        target.wait()
    assert p.returncode == 0, p.stderr
    [r] = runs_json(tv, db)
    assert r["name"] == f"attach-{target.pid}"
    assert r["run_dir"] == str(tmp_path / "att")
    assert r["command"] == ["sleep", "1.5"]
    assert r["exit_code"] is None  # not ours to see


def test_a_python_monitor_running_alone_is_indexed_too(tmp_path):
    db = tmp_path / "runs.db"
    out = tmp_path / "inproc"
    script = (f"import trainvitals, time\n"
              f"with trainvitals.monitor(out={str(out)!r}, db={str(db)!r}, name='inproc',"
              f" quiet=True) as m:\n"
              f"    for i in range(3):\n"
              f"        m.step(i)\n"
              f"        time.sleep(0.05)\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert p.returncode == 0, p.stderr
    assert "run history" not in p.stderr
    runs = runs_json(cli_path(), db)
    assert [(r["name"], r["run_dir"]) for r in runs] == [("inproc", str(out))]
    assert runs[0]["exit_code"] is None  # a monitor in the process does not see its exit
    assert runs[0]["duration_s"] > 0.1


def test_a_database_locked_past_the_busy_timeout_costs_the_run_one_line(tv, tmp_path):
    db = tmp_path / "runs.db"
    p = tv_cmd(tv, "run", "--quiet", "--db", db, "--out", tmp_path / "first", "--", "true")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer that does not let go
    try:
        out = tmp_path / "second"
        started = time.monotonic()
        p = tv_cmd(tv, "run", "--quiet", "--db", db, "--out", out, "--", "true")
        waited = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert p.returncode == 0
    assert p.stderr.splitlines() == [
        f"trainvitals: run history: {db}: database is locked; this run is not indexed"]
    assert 5 <= waited < 15  # the busy timeout, then it gives up
    assert (out / "summary.json").exists()
    # The run directory is still there to import.
    p = tv_cmd(tv, "runs", "import", "--db", db, out)
    assert p.returncode == 0, p.stderr
    assert sorted(r["run_dir"] for r in runs_json(tv, db)) == [str(tmp_path / "first"), str(out)]


def test_the_config_files_db_is_where_runs_land_and_where_runs_looks(tv, tmp_path):
    db = tmp_path / "elsewhere.db"
    config = tmp_path / "tv.toml"
    config.write_text(f'db = "{db}"\n')
    env = {"TRAINVITALS_CONFIG": str(config)}
    p = tv_cmd(tv, "run", "--quiet", "--name", "cfg", "--out", tmp_path / "run", "--", "true",
               env=env)
    assert p.returncode == 0, p.stderr
    p = tv_cmd(tv, "runs", "--json", env=env)
    assert p.returncode == 0, p.stderr
    listed = json.loads(p.stdout)
    assert listed["db"] == str(db)
    assert [r["name"] for r in listed["runs"]] == ["cfg"]


def test_import_of_runs_from_before_costs_computes_their_gpu_hours(tv, tmp_path):
    root = tmp_path / "trainvitals-runs"
    a = old_run(root, "20261101-100000-resnet", start_t=1_793_000_000, duration_s=7200,
                utils=[0.25, 0.75], findings=["input-bound"])
    b = old_run(root, "20261102-100000-bert", start_t=1_793_100_000, duration_s=1800,
                utils=[0.1])
    (root / "latest").symlink_to(b.name)
    (root / "20261103-100000-crashed").mkdir()
    (root / "20261103-100000-crashed" / "meta.json").write_text("{}")
    broken = root / "20261104-100000-broken"
    broken.mkdir()
    (broken / "summary.json").write_text("{not json")
    db = tmp_path / "runs.db"
    p = tv_cmd(tv, "runs", "import", "--db", db, root)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"trainvitals: imported 2 runs into {db}, skipped 2\n"
    assert p.stderr.splitlines() == [
        f"  skipped {root / '20261103-100000-crashed'}: no summary.json",
        f"  skipped {broken}: summary.json is not JSON"]
    runs = {r["name"]: r for r in runs_json(tv, db)}
    assert set(runs) == {"resnet", "bert"}
    r = runs["resnet"]
    assert r["run_dir"] == str(a)
    assert r["gpu_count"] == 2
    assert r["gpu_models"] == "NVIDIA A100-SXM4-80GB"
    assert r["gpu_hours"] == pytest.approx(4.0)           # 2 h x 2 GPUs held
    assert r["busy_gpu_hours"] == pytest.approx(2.0)      # 2 h x (0.25 + 0.75)
    assert r["wasted_gpu_hours"] == pytest.approx(2.0)
    assert r["busy_ratio"] == pytest.approx(0.5)
    assert r["gpu_util_ratio_mean"] == pytest.approx(0.5)
    assert r["gpu_memory_bytes_max"] == 4e9 + 1
    assert r["job_memory_bytes_max"] == 2e9
    assert r["health_score"] == 80
    assert r["findings"] == [{"id": "input-bound", "severity": "warning"}]
    assert runs["bert"]["gpu_hours"] == pytest.approx(0.5)
    assert runs["bert"]["busy_ratio"] == pytest.approx(0.1)
    # Importing again replaces, never duplicates; one run dir imports alone.
    p = tv_cmd(tv, "runs", "import", "--db", db, a)
    assert p.returncode == 0 and p.stdout == f"trainvitals: imported 1 run into {db}\n"
    assert len(runs_json(tv, db)) == 2
    # Nothing importable: exit 1, and why.
    p = tv_cmd(tv, "runs", "import", "--db", db, tmp_path / "nope")
    assert p.returncode == 1
    assert p.stderr == f"  skipped {tmp_path / 'nope'}: not a directory\n"


def make_history(tv, tmp_path):
    """Four runs with known costs, imported; returns the db."""
    root = tmp_path / "runs"
    day = 1_796_000_000  # 2026-11-30T00:53:20Z
    old_run(root, "20261129-100000-train-a", start_t=day, duration_s=3600, utils=[0.9],
            findings=["input-bound"],
            cost={"gpus_used": 4, "gpu_hours": 4.0, "busy_gpu_hours": 3.6,
                  "wasted_gpu_hours": 0.4, "busy_ratio": 0.9, "energy_kwh": 2.0,
                  "co2e_kg": 0.95, "currency": "USD", "money": 10.0})
    old_run(root, "20261129-110000-train-b", start_t=day + 3600, duration_s=7200, utils=[0.2],
            host="node2", findings=["input-bound", "gpu-idle"],
            cost={"gpus_used": 8, "gpu_hours": 16.0, "busy_gpu_hours": 3.2,
                  "wasted_gpu_hours": 12.8, "busy_ratio": 0.2, "energy_kwh": 6.0,
                  "co2e_kg": 2.85})
    old_run(root, "20261129-120000-eval", start_t=day + 7200, duration_s=600, utils=[0.5],
            command=["python", "eval.py", "--split", "test"], exit_code=1,
            cost={"gpus_used": 1, "gpu_hours": 1 / 6, "busy_gpu_hours": 1 / 12,
                  "wasted_gpu_hours": 1 / 12, "busy_ratio": 0.5, "energy_kwh": 0.1,
                  "co2e_kg": 0.0475, "currency": "USD", "money": 0.5})
    gone = old_run(root, "20261129-130000-gone", start_t=day + 10800, duration_s=60,
                   utils=[0.0],
                   cost={"gpus_used": 1, "gpu_hours": 1 / 60, "busy_gpu_hours": 0.0,
                         "wasted_gpu_hours": 1 / 60, "busy_ratio": 0.0})
    db = tmp_path / "runs.db"
    p = tv_cmd(tv, "runs", "import", "--db", db, root)
    assert p.returncode == 0, p.stderr
    shutil.rmtree(gone)
    return db


def test_runs_json_and_stats_json_hold_the_hand_computed_numbers(tv, tmp_path):
    db = make_history(tv, tmp_path)
    runs = runs_json(tv, db)
    assert [r["name"] for r in runs] == ["gone", "eval", "train-b", "train-a"]
    assert [r["missing"] for r in runs] == [True, False, False, False]
    assert runs[2]["gpu_count"] == 8 and runs[2]["wasted_gpu_hours"] == 12.8
    assert runs[3]["money"] == 10.0 and runs[3]["currency"] == "USD"
    assert runs[2]["money"] is None and runs[2]["currency"] is None
    p = tv_cmd(tv, "runs", "stats", "--db", db, "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["runs"] == 4
    assert s["duration_s_total"] == 3600 + 7200 + 600 + 60
    assert s["duration_s_mean"] == pytest.approx((3600 + 7200 + 600 + 60) / 4)
    held = 4 + 16 + 1 / 6 + 1 / 60
    busy = 3.6 + 3.2 + 1 / 12
    assert s["gpu_hours"] == pytest.approx(held)
    assert s["busy_gpu_hours"] == pytest.approx(busy)
    assert s["busy_ratio"] == pytest.approx(busy / held)   # weighted by GPU-hours
    assert s["wasted_gpu_hours"] == pytest.approx(held - busy)
    assert s["low_busy"] == {"below_ratio": 0.3, "runs": 2,
                             "gpu_hours": pytest.approx(16 + 1 / 60)}
    assert s["energy_kwh"] == pytest.approx(8.1)
    assert s["co2e_kg"] == pytest.approx(0.95 + 2.85 + 0.0475)
    assert s["money"] == {"USD": pytest.approx(10.5)}
    assert [w["name"] for w in s["top_wasters"]] == ["train-b", "train-a", "eval", "gone"]
    assert s["findings"] == [{"id": "input-bound", "runs": 2}, {"id": "gpu-idle", "runs": 1}]
    # The text says the same.
    p = tv_cmd(tv, "runs", "stats", "--db", db)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("trainvitals: 4 runs\n")
    assert "  GPU       20.2 GPU-h held, 6.88 busy (34%), 13.3 wasted\n" in p.stdout
    assert "  Low use   2 runs busy under 30%, holding 16.0 GPU-h\n" in p.stdout
    assert "  Money     10.50 USD\n" in p.stdout


def test_sort_and_filters(tv, tmp_path):
    db = make_history(tv, tmp_path)

    def names(*args):
        return [r["name"] for r in runs_json(tv, db, *args)]

    assert names("--sort", "wasted_gpu_hours") == ["train-b", "train-a", "eval", "gone"]
    assert names("--sort", "busy_ratio") == ["gone", "train-b", "eval", "train-a"]
    assert names("--sort", "duration") == ["train-b", "train-a", "eval", "gone"]
    assert names("--sort", "money") == ["train-a", "eval", "gone", "train-b"]  # unknown last
    assert names("--name", "train-*") == ["train-b", "train-a"]
    assert names("--host", "node2") == ["train-b"]
    assert names("--command", "--split test") == ["eval"]
    assert names("--since", "2026-11-30T02:53:20Z") == ["gone", "eval"]
    assert names("--since", "2026-11-30T03:53:20+01:00") == ["gone", "eval"]
    assert names("--limit", "2") == ["gone", "eval"]
    assert names("--since", "100000d") == ["gone", "eval", "train-b", "train-a"]
    p = tv_cmd(tv, "runs", "stats", "--db", db, "--json", "--name", "train-*")
    assert json.loads(p.stdout)["runs"] == 2
    p = tv_cmd(tv, "runs", "--db", db, "--json", "--host", "node2", "stats")
    assert json.loads(p.stdout)["runs"] == 1
    # The table: newest first, the gone run marked, every name there.
    p = tv_cmd(tv, "runs", "--db", db)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["START", "NAME", "DURATION", "GPUS", "BUSY", "GPU-H", "WASTED",
                                "KWH", "HEALTH", "EXIT"]
    assert [line.split()[2] for line in lines[1:]] == ["gone", "eval", "train-b", "train-a"]
    assert lines[1].endswith("(missing)")
    assert lines[3].split()[3:9] == ["2:00:00", "8", "20%", "16.0", "12.8", "6.00"]


def test_bad_since_and_sort_are_usage_errors(tv, tmp_path):
    db = tmp_path / "runs.db"
    p = tv_cmd(tv, "runs", "--db", db, "--since", "last tuesday")
    assert p.returncode == 2
    assert p.stderr == ("trainvitals: --since: 'last tuesday' is not a time: give a date "
                        "(2026-11-30), an ISO time (2026-11-30T14:00, 2026-11-30T14:00:00Z) or "
                        "a duration back from now (7d, 12h, 30m)\n")
    p = tv_cmd(tv, "runs", "--db", db, "--sort", "cost")
    assert p.returncode == 2
    assert p.stderr.startswith("trainvitals: --sort: unknown key 'cost' (keys: start, name, ")
    assert "wasted_gpu_hours" in p.stderr
    p = tv_cmd(tv, "runs", "stats", "--db", db, "--since", "3x")
    assert p.returncode == 2 and "--since: '3x' is not a time" in p.stderr
    p = tv_cmd(tv, "runs", "--db", db, "--limit", "-1")
    assert p.returncode == 2


def test_an_empty_history_says_so(tv, tmp_path):
    db = tmp_path / "new" / "runs.db"
    p = tv_cmd(tv, "runs", "--db", db)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"trainvitals: no runs in {db}\n"
    p = tv_cmd(tv, "runs", "stats", "--db", db)
    assert p.stdout == "trainvitals: 0 runs\n"
