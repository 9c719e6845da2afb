"""Markers from a training process reach the sampler: under `run` and alone."""
import json
import os
import pathlib
import subprocess
import sys

from conftest import HELPERS, ROOT, read_jsonl
from prom_services import free_port, http_get, wait_for
from schema import check_run_dir

SCRIPT = [sys.executable, str(HELPERS / "markers_script.py")]
ENV = {"PYTHONPATH": str(ROOT / "python")}


def check_epochs(summary, steps=20, epochs=3):
    recs = summary["epochs"]
    assert [r["epoch"] for r in recs] == list(range(epochs)), recs
    for r in recs:
        assert r["steps"] == steps, r
        assert r["duration_s"] > 0 and r["steps_per_second"] > 0, r
        assert r["cpu_cores_mean"] >= 0 and r["memory_bytes_max"] > 0, r
    assert summary["phases"]["train"]["duration_s"] > 0
    assert summary["phases"]["eval"]["duration_s"] >= 0.3  # 3 x 0.15 s of eval
    assert summary["phases"]["eval"]["count"] == epochs
    assert summary["training"]["steps"] == steps * epochs


def test_markers_under_run_join_the_supervisors_run(run_tv, tmp_path):
    sock_file = tmp_path / "socket.txt"
    # Rows of one sample each: the 0.2 s of training in each epoch is certain to
    # hold a row's end (a 1 s row ends wherever the ~1 s script happens to be).
    r = run_tv([*SCRIPT, "--socket-file", str(sock_file)], "--interval", "0.1", env=ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    check_epochs(r.summary)
    assert r.meta["mode"] == "run"
    # No second sampler: the script made no run directory of its own.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "socket.txt"]
    trained = [row["training"] for row in r.rows if "training" in row]
    assert trained and trained[-1]["steps"] == 60
    assert any(t.get("phase") == "train" for t in trained)
    assert any("loss" in t.get("scalars", {}) for t in trained)
    types = [e["type"] for e in r.events]
    assert types.count("epoch") == 3 and types.count("epoch_end") == 3
    starts = [e for e in r.events if e["type"] == "client_start"]
    assert len(starts) == 1 and starts[0]["framework"] == "python"
    assert "trainvitals: epoch 2:" in r.proc.stderr
    check_run_dir(r.out)
    # The private directory is gone with the run.
    socket_path = pathlib.Path(sock_file.read_text())
    assert socket_path.name == "markers.sock" and not socket_path.parent.exists()


def test_alone_the_monitor_samples_in_process(tmp_path):
    out = tmp_path / "alone"
    proc = subprocess.run([*SCRIPT, "--out", str(out)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **ENV})
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "meta.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert meta["mode"] == "python" and meta["pid"] > 0
    check_epochs(summary)
    assert any("training" in row for row in read_jsonl(out / "samples.jsonl"))
    check_run_dir(out)


def test_alone_a_training_that_dies_still_leaves_its_summary(tmp_path):
    out = tmp_path / "alone"
    proc = subprocess.run([*SCRIPT, "--out", str(out), "--crash-in-epoch", "1"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **ENV})
    assert proc.returncode == 1 and "CUDA out of memory" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    first, second = summary["epochs"]
    assert first["steps"] == 20 and first.get("complete", True)
    # The epoch the exception cut: marked, with the 20 steps it took before the
    # exception (from the process's count at its begin to its count at its bye).
    assert second["epoch"] == 1 and second["complete"] is False
    assert second["steps"] == 20, second


def test_malformed_markers_are_counted_and_the_run_goes_on(run_tv):
    r = run_tv([*SCRIPT, "--malformed", "6", "--steps", "5"], env=ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.summary["training"]["markers_malformed"] == 6
    bad = [e for e in r.events if e["type"] == "marker_malformed"]
    assert len(bad) == 1, bad
    assert "ignored a malformed marker" in r.proc.stderr
    check_epochs(r.summary, steps=5)


def test_prometheus_shows_training_steps_by_rank(tv, tmp_path):
    port = free_port()
    out = tmp_path / "run"
    proc = subprocess.Popen([tv, "run", "--quiet", "--out", str(out), "--prometheus", str(port),
                             "--", *SCRIPT, "--steps", "5", "--linger", "30"],
                            env={**os.environ, **ENV}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        def steps_exported():
            text = http_get(url)[2]
            return text if "trainvitals_training_process_steps_total" in text else None

        text = wait_for(steps_exported, timeout=30, what="per-process steps on /metrics")
        assert 'trainvitals_training_steps_total{' in text
        assert 'rank="-1"' in text
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)
