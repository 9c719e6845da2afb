#!/usr/bin/env bash
# The unit tests (ctest, fuzz corpora included) and the integration tests that
# exercise the CLI's threads (run, attach, markers, Prometheus under scrape
# load) under ASan+UBSan (build/asan) and under TSan (build/tsan), both clang.
# Clean means: every test passes and no sanitizer wrote a report (reports go to
# <build>/sanitizer-logs, printed here). Both trees keep line tables only
# (-gline-tables-only: a report still names each frame's function, file and
# line) and precompile their common headers (TRAINVITALS_PCH), which makes them
# compile about a fifth faster. The integration tests' Python side
# uses the release build's module (make build). With --build it only
# configures and builds the trees (.ci/run builds them while other tests run).
#   scripts/sanitize.sh [--build] [asan] [tsan]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
build_only=
if [ "${1:-}" = --build ]; then
  build_only=1
  shift
fi
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(asan tsan)
integration=(tests/integration/test_run_dir.py tests/integration/test_exit_codes.py
  tests/integration/test_markers.py tests/integration/test_prometheus.py
  tests/integration/test_scrape_load.py tests/integration/test_alert_actions.py
  tests/integration/test_hostile_peers.py tests/integration/test_alert_end.py)
# In-process monitoring (test_markers' "alone" tests) runs the release Python
# module, not this build: left out.
select="not alone"

status=0
for preset in "${presets[@]}"; do
  build=build/$preset
  [ -f $build/build.ninja ] || cmake --preset "$preset" >/dev/null
  cmake --build $build
  [ -z "$build_only" ] || continue
  logs=$PWD/$build/sanitizer-logs
  rm -rf "$logs"
  mkdir -p "$logs"
  export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:strict_string_checks=1"
  export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1"
  export TSAN_OPTIONS="log_path=$logs/tsan:second_deadlock_stack=1"
  echo "sanitize: $preset: unit tests"
  (cd $build && ctest --output-on-failure -j2) || status=1
  echo "sanitize: $preset: integration tests"
  TRAINVITALS_BUILD=$build PYTHONPATH=python "$PYTHON" -m pytest -q -k "$select" \
    "${integration[@]}" || status=1
  unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
  if [ -n "$(ls -A "$logs")" ]; then
    echo "sanitize: $preset: sanitizer reports:"
    for f in "$logs"/*; do
      echo "== $f"
      cat "$f"
    done
    status=1
  fi
done
exit $status
