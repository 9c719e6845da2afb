"""The run history on a local PostgreSQL (Debian's server, started in a temporary
directory; tests/integration/pg_service.py): indexing one run (target: at most 20 ms),
as a run's end does it in-process (bench/runs_bench.cc BM_Postgres*: connect, log in,
upsert; and the upsert alone) and as `runs import` does it (the program's start
included), over TCP with a password (scram-sha-256) and over the Unix socket; and `runs
stats` over 100,000 runs (target: at most 500 ms). The runs are written by SQL in one
statement (the shape of bench/runs_bench.cc's, with owners and jobs)."""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

root = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "tests" / "integration"))
from pg_service import Postgres, pg_bin  # noqa: E402

cli = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "release" / "trainvitals")
RUNS = 100_000

FILL = f"""
INSERT INTO runs (run_dir, name, command_json, command, host, start_t, end_t, duration_s,
  exit_code, gpu_count, gpu_models, gpu_hours, busy_ratio, busy_gpu_hours, wasted_gpu_hours,
  energy_kwh, co2e_kg, health_score, user_name, job_id, job_kind, indexed_t)
SELECT '/bench/runs/20261130-' || lpad(i::text, 6, '0') || '-job' || i % 97, 'job' || i % 97,
  '["python","train.py","--seed","' || i || '"]', 'python train.py --seed ' || i,
  'node' || i % 16, 1.79e9 + i * 600.0, 1.79e9 + i * 600.0 + d, d,
  CASE WHEN i % 20 = 0 THEN 1 ELSE 0 END, g, 'NVIDIA H100 80GB HBM3', d / 3600 * g,
  (i % 100) / 100.0, d / 3600 * g * (i % 100) / 100.0, d / 3600 * g * (1 - (i % 100) / 100.0),
  d / 3600 * g * 0.7, d / 3600 * g * 0.7 * 0.475, 40 + i % 60, 'user' || i % 40,
  (i % 5000)::text, 'slurm', 1.79e9
FROM (SELECT i, 300.0 + (i % 50) * 60 AS d, 1 << (i % 4) AS g
      FROM generate_series(0, {RUNS - 1}) i) s;
INSERT INTO runs_findings (run_id, id, severity)
SELECT r.id, (ARRAY['input-bound', 'gpu-idle', 'memory-leak', 'cpu-bound',
                    'low-gpu-memory-use'])[1 + (r.id + f) % 5], 'warning'
FROM runs r, generate_series(0, 2) f WHERE f < r.id % 4 ORDER BY r.id, f;
ANALYZE;
"""


def timed(args, n):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        p = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
        times.append((time.perf_counter() - start) * 1000)
        if p.returncode != 0:
            sys.exit(f"{' '.join(map(str, args))}: {p.stderr}")
    return statistics.median(times), max(times), p.stdout


def report(what, median, worst, target):
    print(f"{what}: median {median:.1f} ms, max {worst:.1f} ms "
          f"({'ok' if median <= target else 'OVER'} against {target} ms)")


if pg_bin() is None:
    sys.exit("PostgreSQL's server is not installed (Debian's postgresql)")
pg = Postgres()
try:
    with tempfile.TemporaryDirectory() as tmp:
        # One finished run, written by a real `trainvitals run` into an SQLite file.
        run_dir = pathlib.Path(tmp) / "run"
        subprocess.run([cli, "run", "--quiet", "--db", pathlib.Path(tmp) / "runs.db", "--out",
                        run_dir, "--", "true"], check=True)
        one = pg.createdb("one")
        timed(["runs", "import", "--db", one, run_dir], 1)  # creates the schema
        for how, url in (("TCP, password", one), ("Unix socket", pg.socket_url("one"))):
            bench = subprocess.run(
                [str(pathlib.Path(cli).parent / "trainvitals_bench"),
                 "--benchmark_filter=Postgres", "--benchmark_repetitions=3",
                 "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                capture_output=True, text=True, check=True,
                env={**os.environ, "TRAINVITALS_BENCH_POSTGRES": url})
            for b in json.loads(bench.stdout)["benchmarks"]:
                if b["aggregate_name"] == "median":
                    what = {"BM_PostgresOpenAndPut": "connect, log in, upsert",
                            "BM_PostgresPut": "the upsert alone"}[b["run_name"].split("/")[0]]
                    print(f"index one run in-process ({how}): {what}: "
                          f"median {b['real_time']:.2f} ms")
            report(f"runs import of one run ({how}; start, load libpq, connect, upsert)",
                   *timed(["runs", "import", "--db", url, run_dir], 20)[:2], 20)

        many = pg.createdb("many")
        timed(["runs", "--db", many], 1)
        pg.psql("many", FILL)
        median, worst, out = timed(["runs", "stats", "--db", many, "--json"], 5)
        assert json.loads(out)["runs"] == RUNS, out[:200]
        report(f"runs stats over {RUNS:,} runs", median, worst, 500)
        report(f"runs stats --by user over {RUNS:,} runs",
               *timed(["runs", "stats", "--db", many, "--by", "user"], 5)[:2], 500)
        report(f"runs (the newest 30) of {RUNS:,} runs",
               *timed(["runs", "--db", many], 5)[:2], 100)
finally:
    pg.close()
