"""One job across nodes: `run` and `attach` name the job their training belongs
to (--job-id, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, the rendezvous) in meta.json,
the run history (`runs --job ID`) and every Prometheus series."""
import datetime
import json
import os
import subprocess
import sys

from conftest import cli_path
from prom_services import free_port, http_get, need, query, start_prometheus, wait_for

# What names a job, kept out of the tests' own environment (a CI inside Slurm).
NAMING = ("SLURM_", "TORCHELASTIC_", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(NAMING)}
    env.update(extra)
    return env


def tv(*args, env=None, timeout=60):
    return subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env or clean_env())


def runs_of_job(db, job):
    p = tv("runs", "--db", db, "--json", "--limit", "0", "--job", job)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["runs"]


def start_minute(meta):
    t = datetime.datetime.fromtimestamp(meta["start_t"], datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%MZ")


def test_the_rendezvous_names_the_job_and_the_history_finds_it(tmp_path):
    out, db = tmp_path / "run", tmp_path / "runs.db"
    p = tv("run", "--quiet", "--out", out, "--db", db, "--", "sh", "-c", "true",
           env=clean_env(MASTER_ADDR="10.0.0.1", MASTER_PORT="29500", GROUP_RANK="1"))
    assert p.returncode == 0, p.stderr
    meta = json.loads((out / "meta.json").read_text())
    job = f"10.0.0.1:29500@{start_minute(meta)}"
    assert meta["job"] == {"id": job, "kind": "rendezvous", "node_rank": 1}
    runs = runs_of_job(db, job)
    assert [r["run_dir"] for r in runs] == [str(out.resolve())]
    assert runs[0]["job_kind"] == "rendezvous"


def test_job_id_wins_and_a_run_without_one_names_no_job(tmp_path):
    db = tmp_path / "runs.db"
    p = tv("run", "--quiet", "--out", tmp_path / "given", "--db", db, "--job-id", "exp-7", "--",
           "sh", "-c", "true",
           env=clean_env(MASTER_ADDR="10.0.0.1", MASTER_PORT="29500", SLURM_JOB_ID="4242",
                         TORCHELASTIC_RUN_ID="elastic-1"))
    assert p.returncode == 0, p.stderr
    meta = json.loads((tmp_path / "given" / "meta.json").read_text())
    assert meta["job"] == {"id": "exp-7", "kind": "given"}
    assert [r["job"] for r in runs_of_job(db, "exp-7")] == ["exp-7"]
    # torchrun's default run id names nothing; nor does anything else here.
    p = tv("run", "--quiet", "--out", tmp_path / "none", "--db", db, "--", "sh", "-c", "true",
           env=clean_env(TORCHELASTIC_RUN_ID="none"))
    assert p.returncode == 0, p.stderr
    assert "job" not in json.loads((tmp_path / "none" / "meta.json").read_text())


def test_the_launchers_command_line_names_the_job(tmp_path):
    # A stand-in for torchrun: the launcher is known by its program's name.
    launcher = tmp_path / "torchrun"
    launcher.write_text("#!/bin/sh\nexit 0\n")
    launcher.chmod(0o755)
    p = tv("run", "--quiet", "--out", tmp_path / "run", "--db", tmp_path / "runs.db", "--",
           launcher, "--nnodes=2", "--node_rank", "1", "--rdzv-id", "job-77",
           "--rdzv-endpoint", "node0:29400", "train.py", "--rdzv-id", "not-this")
    assert p.returncode == 0, p.stderr
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["job"] == {"id": "job-77", "kind": "torchelastic", "node_rank": 1}


def test_attach_reads_the_targets_environment(tmp_path):
    target = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2.5)"],
                              env=clean_env(TORCHELASTIC_RUN_ID="elastic-9", SLURM_NODEID="3"))
    try:
        p = tv("attach", "--quiet", "--out", tmp_path / "att", "--db", tmp_path / "runs.db",
               target.pid)
    finally:
        target.wait(timeout=30)
    assert p.returncode == 0, p.stderr
    meta = json.loads((tmp_path / "att" / "meta.json").read_text())
    assert meta["job"] == {"id": "elastic-9", "kind": "torchelastic", "node_rank": 3}


def test_every_prometheus_series_carries_the_job_and_prometheus_keeps_it(tmp_path):
    port = free_port()
    run = subprocess.Popen(
        [cli_path(), "run", "--quiet", "--out", str(tmp_path / "run"), "--db",
         str(tmp_path / "runs.db"), "--interval", "0.5", "--name", "ranked", "--job-id",
         'exp "7"/a', "--prometheus", f"127.0.0.1:{port}", "--",
         sys.executable, "-c", "import time; time.sleep(60)"], env=clean_env())
    url = f"http://127.0.0.1:{port}/metrics"
    prom = None
    try:
        text = wait_for(lambda: (lambda t: t if "trainvitals_job_processes" in t else None)(
            http_get(url)[2]), what="a first row")
        om = http_get(url, {"Accept": "application/openmetrics-text; version=1.0.0"})[2]
        # Scraped as deploy/prometheus/prometheus.yml scrapes runs: the run's job is kept.
        prom = start_prometheus(tmp_path, [f"127.0.0.1:{port}"], honor_labels=True)

        def scraped():
            answer = query(prom.url, 'trainvitals_job_processes{run="ranked"}')
            return answer["status"] == "success" and answer["data"]["result"]

        result = wait_for(scraped, timeout=40, what="the run's series in Prometheus")
    finally:
        if prom is not None:
            prom.stop()
        run.terminate()
        run.wait(timeout=30)
    assert result[0]["metric"]["job"] == 'exp "7"/a'
    for body in (text, om):
        series = [l for l in body.splitlines() if l and not l.startswith("#")]
        assert series
        for line in series:
            assert 'run="ranked",job="exp \\"7\\"/a"' in line, line
    check = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
