"""The run history on a real PostgreSQL (Debian's server, started here as the `postgres`
user in a temporary directory): runs from two nodes ending at once, a server that goes down
and comes back, the same numbers as the SQLite file, and errors that never show a password."""
import json
import subprocess

import pytest

from conftest import cli_path
from pg_service import PASSWORD, Postgres, pg_bin
from prom_services import free_port

@pytest.fixture(scope="module")
def pg():
    if pg_bin() is None or not (pg_bin() / "pg_ctl").exists():
        pytest.skip("PostgreSQL's server is not installed (Debian's postgresql: initdb, pg_ctl)")
    server = None
    try:
        server = Postgres()
        yield server
    finally:
        if server is not None:
            server.close()


def tv_cmd(*args, timeout=60):
    return subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def listed(db, *args):
    p = tv_cmd("runs", "--db", db, "--json", "--limit", "0", *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_twenty_runs_ending_at_once_on_two_nodes_are_each_indexed_once(pg, tmp_path):
    url = pg.createdb("twenty")  # a new database: the first runs race to create the schema
    dirs = {node: tmp_path / node for node in ("node1", "node2")}
    procs = [subprocess.Popen([cli_path(), "run", "--quiet", "--db", url, "--name", f"{node}-{i}",
                               "--out", str(dirs[node] / f"r{i:02}"), "--", "true"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(10) for node in dirs]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == "", err
    expected = sorted(str(d / f"r{i:02}") for d in dirs.values() for i in range(10))
    out = listed(url)
    assert out["db"] == pg.url("twenty", password="***")
    assert sorted(r["run_dir"] for r in out["runs"]) == expected
    assert {r["name"] for r in out["runs"]} == {f"{n}-{i}" for n in dirs for i in range(10)}
    assert all(r["exit_code"] == 0 and r["command"] == ["true"] for r in out["runs"])
    # Importing them again replaces each row: still one per run directory.
    p = tv_cmd("runs", "import", "--db", url, *dirs.values())
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"trainvitals: imported 20 runs into {pg.url('twenty', password='***')}\n"
    assert sorted(r["run_dir"] for r in listed(url)["runs"]) == expected
    p = tv_cmd("runs", "stats", "--db", url, "--json")
    assert json.loads(p.stdout)["runs"] == 20


def test_runs_ending_while_the_database_is_down_cost_one_line_and_import_brings_them(pg,
                                                                                    tmp_path):
    url = pg.createdb("down")
    root = tmp_path / "runs"

    def run(i):
        return tv_cmd("run", "--quiet", "--db", url, "--out", root / f"r{i}", "--", "sh", "-c",
                      f"exit {i}")

    assert run(0).stderr == ""
    pg.stop()
    try:
        for i in (1, 2):
            p = run(i)
            assert p.returncode == i
            assert (root / f"r{i}" / "summary.json").exists()
            lines = p.stderr.splitlines()
            assert len(lines) == 1, p.stderr
            assert lines[0].startswith(
                f"trainvitals: run history: {pg.url('down', password='***')}: connection to "
                f"server at \"127.0.0.1\", port {pg.port} failed: Connection refused"), lines[0]
            assert lines[0].endswith("; this run is not indexed")
            assert PASSWORD not in p.stderr
    finally:
        pg.start()
    assert [r["exit_code"] for r in listed(url)["runs"]] == [0]
    p = tv_cmd("runs", "import", "--db", url, root)
    assert p.returncode == 0, p.stderr
    assert sorted(r["exit_code"] for r in listed(url)["runs"]) == [0, 1, 2]


def prepared_runs(root):
    """Eight finished runs of three users on two hosts, two Slurm jobs, with costs and findings."""
    start = 1_796_000_000
    for i in range(8):
        d = root / f"20261129-1{i}0000-{'train' if i % 3 else 'eval'}-{'ab'[i % 2]}{i}"
        d.mkdir(parents=True)
        user, host = ["alice", "bob", "carol"][i % 3], f"node{i % 2 + 1}"
        held = 0.5 + i * 1.25
        busy = held * (i % 5) / 5
        cost = {"gpus_used": 1 + i % 4, "gpu_hours": held, "busy_gpu_hours": busy,
                "wasted_gpu_hours": held - busy, "busy_ratio": busy / held,
                "energy_kwh": 0.3 * i + 0.1, "co2e_kg": 0.1 * i}
        if i % 2:
            cost.update(currency="EUR", money=1.1 * i)
        meta = {"schema_version": 1, "mode": "run", "command": ["python", f"train{i}.py"],
                "host": host, "user": user, "start_t": start + i * 3600,
                "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]}
        if i < 5:
            meta["job"] = {"id": str(4240 + i % 2), "kind": "slurm", "user": user,
                           "account": "vision", "partition": "gpu"}
        summary = {"schema_version": 1, "command": meta["command"], "run_dir": str(d),
                   "start_t": start + i * 3600, "end_t": start + i * 3600 + 600 + i,
                   "duration_s": 600 + i + 0.1, "exit_code": 3 if i % 4 == 3 else 0, "exit_signal": None,
                   "host": {}, "job": {"memory_bytes": {"mean": 1e9, "max": 2e9 + i}},
                   "gpus": [{"index": 0, "physical_index": 0, "util_ratio": {"mean": 0.3,
                                                                            "max": 1.0}}],
                   "epochs": [], "phases": {},
                   "findings": [{"id": f, "severity": "warning"}
                                for f in ["input-bound", "gpu-idle", "memory-leak"][:i % 4]],
                   "health": {"score": 50 + i}, "cost": cost}
        (d / "meta.json").write_text(json.dumps(meta))
        (d / "summary.json").write_text(json.dumps(summary))


def test_stats_over_postgresql_and_sqlite_give_the_same_numbers(pg, tmp_path):
    root = tmp_path / "runs"
    prepared_runs(root)
    url, sqlite = pg.createdb("same"), tmp_path / "runs.db"
    for db in (url, sqlite):
        p = tv_cmd("runs", "import", "--db", db, root)
        assert p.returncode == 0 and "imported 8 runs" in p.stdout, p.stdout + p.stderr

    def both(*args):
        out = []
        for db in (url, sqlite):
            p = tv_cmd("runs", *args[:1], "--db", db, *args[1:])
            assert p.returncode == 0, p.stderr
            out.append(json.loads(p.stdout) if "--json" in args else p.stdout)
        if "--json" in args:
            assert out[0].pop("db") == pg.url("same", password="***")
            assert out[1].pop("db") == str(sqlite)
        return out

    pg_stats, sqlite_stats = both("stats", "--json")
    assert pg_stats == sqlite_stats
    assert pg_stats["runs"] == 8 and pg_stats["money"] == {"EUR": pytest.approx(17.6)}
    for key in ("user", "host", "job", "account", "name"):
        pg_by, sqlite_by = both("stats", "--json", "--by", key)
        assert pg_by == sqlite_by, key
    pg_users, _ = both("stats", "--json", "--by", "user")
    assert sorted(g["user"] for g in pg_users["groups"]) == ["alice", "bob", "carol"]
    text = both("stats", "--by", "user")
    assert text[0] == text[1]
    for args in (["--sort", "name"], ["--sort", "wasted_gpu_hours", "--limit", "3"],
                 ["--limit", "0"],
                 ["--name", "train-[ab]*", "--sort", "busy_ratio"], ["--name", "eval-?0"],
                 ["--command", "train3", "--sort", "health"], ["--user", "bob"],
                 ["--job", "4241"], ["--host", "node2", "--since", "2026-11-30"]):
        pg_runs, sqlite_runs = both("--json", *args)
        assert pg_runs == sqlite_runs, args
        assert pg_runs["runs"], args
    assert [r["name"] for r in both("--json", "--name", "eval-?0")[0]["runs"]] == ["eval-a0"]


def test_a_wrong_password_or_a_refused_connection_is_a_clear_error_without_the_password(
        pg, tmp_path):
    wrong = pg.url("postgres", password="wrong-secret-pw")
    p = tv_cmd("runs", "--db", wrong)
    assert p.returncode == 2
    assert p.stderr.startswith(
        f"trainvitals: run history: {pg.url('postgres', password='***')}: connection to server "
        f"at \"127.0.0.1\", port {pg.port} failed: FATAL:  password authentication failed for "
        "user \"postgres\""), p.stderr
    refused = pg.url("postgres", password="wrong-secret-pw", port=free_port())
    for args in (["runs", "stats", "--db", refused],
                 ["runs", "import", "--db", refused, tmp_path]):
        p = tv_cmd(*args)
        assert p.returncode == 2
        assert "Connection refused" in p.stderr and "***" in p.stderr
        assert "wrong-secret-pw" not in p.stderr + p.stdout
    p = tv_cmd("run", "--quiet", "--db", refused, "--out", tmp_path / "r", "--", "true")
    assert p.returncode == 0
    assert len(p.stderr.splitlines()) == 1 and "wrong-secret-pw" not in p.stderr


def test_a_database_of_a_newer_schema_is_refused_and_left_alone(pg, tmp_path):
    url = pg.createdb("newer")
    assert tv_cmd("runs", "--db", url).returncode == 0  # creates the schema
    pg.psql("newer", "UPDATE trainvitals_schema SET version = 99")
    p = tv_cmd("runs", "--db", url)
    assert p.returncode == 2
    assert p.stderr == (f"trainvitals: run history: {pg.url('newer', password='***')}: written "
                        "by a newer trainvitals (schema 99; this one knows 4)\n")
    p = tv_cmd("run", "--quiet", "--db", url, "--out", tmp_path / "r", "--", "true")
    assert p.returncode == 0 and "written by a newer trainvitals" in p.stderr
    assert pg.psql("newer", "SELECT version FROM trainvitals_schema").returncode == 0
