#!/usr/bin/env bash
# `make bench`: the micro-benchmarks, the side-by-side with a bare loop, psutil
# and the other monitors, and the whole-program overhead, with the training
# slowdown; the side-by-side and the slowdown go into docs/performance.md.
# Numbers vary with the machine: run on a quiet one and read the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
py=build/venv/bin/python   # the project environment (`make deps`, `deps.sh --bench`)
echo "== micro-benchmarks"
"$build/trainvitals_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_filter=-Postgres   # bench/history_postgres.py runs those against a server it starts
echo
echo "== one full sample beside a bare loop and psutil; the monitors side by side"
blocks=$(mktemp -d)
"$py" bench/compare_peers.py "$build/trainvitals_bench" "$py" --cli "$build/trainvitals" \
  --markdown "$blocks/peers.md"
echo
echo "== a marker on the training thread, from Python (target <= 5 us a call)"
PYTHONPATH=python "$py" bench/markers_bench.py
echo
echo "== a profile capture of 20 steps, per framework: what it costs the training"
"$py" bench/profile_cost.py "$build/trainvitals"
echo
echo "== trainvitals pick (target <= 300 ms)"
"$py" bench/pick_bench.py "$build/trainvitals"
echo
echo "== trainvitals top beside nvitop (target <= 1 % of a core, cheaper than nvitop)"
"$py" bench/top_bench.py "$build/trainvitals" --seconds "${BENCH_SECONDS:-30}"
echo
echo "== trainvitals serve: 64 jobs, about 2,000 processes, 8 GPUs (target <= 1 % of a core, 50 MiB)"
"$py" bench/serve_bench.py "$build/trainvitals" --seconds "${BENCH_SECONDS:-60}"
echo
echo "== the run history on PostgreSQL: index one run (target <= 20 ms), runs stats over 100,000 runs (target <= 500 ms)"
"$py" bench/history_postgres.py "$build/trainvitals"
echo
echo "== whole-program overhead"
"$py" bench/overhead.py "$build/trainvitals" --seconds "${BENCH_SECONDS:-60}" \
  --processes 16,64,256 --floor "$build/bench_wake_floor" --rounds "${BENCH_ROUNDS:-3}" \
  --runs 100 --pairs "${BENCH_PAIRS:-8}" --markdown "$blocks/training.md"
echo
echo "== start-up: trainvitals run -- true against true (target: adds <= 20 ms with the driver present)"
"$py" bench/startup.py "$build/trainvitals" "$build/tests/fake_nvml/fake_nvml/libnvidia-ml.so.1"
echo
echo "== /metrics under load: wrk -t2 -c16 -d5s against trainvitals run --prometheus (target >= 1000 scrapes/s)"
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$(mktemp -d)
"$build/trainvitals" run --quiet --out "$out/run" --prometheus "127.0.0.1:$port" -- sleep 60 &
tv_pid=$!
for _ in $(seq 50); do
  "$py" -c 'import sys, urllib.request as u; sys.exit("trainvitals_job_processes" not in u.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:$port/metrics" 2>/dev/null && break
  sleep 0.2
done
wrk -t2 -c16 -d5s "http://127.0.0.1:$port/metrics" | tee "$out/wrk.txt"
kill -TERM "$tv_pid"; wait "$tv_pid" || true
rate=$(awk '/Requests\/sec/ {print int($2)}' "$out/wrk.txt")
if [ "${rate:-0}" -ge 1000 ]; then echo "scrapes/s: $rate (>= 1000: ok)"; else echo "scrapes/s: ${rate:-0} (BELOW 1000)"; fi
"$py" -c 'import json, sys; s = json.load(open(sys.argv[1])); print("sampler under load: late ticks", s["late_ticks"], "rows dropped", s["rows_dropped"])' "$out/run/summary.json"
rm -rf "$out"

# The side-by-side and the training slowdown, measured above, into docs/performance.md.
"$py" - docs/performance.md "$blocks" <<'PY'
import pathlib, sys
doc, blocks = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
text = doc.read_text()
for name in ("peers", "training"):
    start, end = f"<!-- bench:{name} -->\n", f"<!-- end bench:{name} -->"
    i, j = text.index(start) + len(start), text.index(end)
    text = text[:i] + (blocks / f"{name}.md").read_text() + text[j:]
doc.write_text(text)
PY
rm -rf "$blocks"
echo "docs/performance.md: the side-by-side and the training slowdown updated"
