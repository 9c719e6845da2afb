#!/usr/bin/env bash
# `make bench`: the micro-benchmarks, the side-by-side with a bare loop and
# psutil, and the whole-program overhead. Numbers vary with the machine: run on
# a quiet one and read the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
echo "== micro-benchmarks"
"$build/trainvitals_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
echo
echo "== one full sample beside a bare loop and psutil"
python3 bench/compare_peers.py "$build/trainvitals_bench" /usr/bin/python3
echo
echo "== whole-program overhead"
python3 bench/overhead.py "$build/trainvitals" --seconds "${BENCH_SECONDS:-60}"
"$build/bench_wake_floor" 20 "${BENCH_SECONDS:-30}"
