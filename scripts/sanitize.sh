#!/usr/bin/env bash
# The unit tests (ctest, fuzz corpora included) and the integration tests that
# exercise the CLI's threads (run, attach, markers, Prometheus under scrape
# load) under ASan+UBSan (build/asan) and under TSan (build/tsan), both clang.
# Clean means: every test passes and no sanitizer wrote a report (reports go to
# <build>/sanitizer-logs, printed here). Both trees keep line tables only
# (-gline-tables-only: a report still names each frame's function, file and
# line) and precompile their common headers (TRAINVITALS_PCH), which makes them
# compile about a fifth faster. The integration tests' Python side
# uses the release build's module (make build). One phase alone: --build only
# configures and builds the trees, --unit builds them and runs the unit tests,
# --integration runs the integration tests in trees already built (.ci/run
# runs the first two while other tests run).
#   scripts/sanitize.sh [--build|--unit|--integration] [asan] [tsan]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
root=$PWD
build=1 unit=1 integrate=1
case "${1:-}" in
  --build) unit= integrate= && shift ;;
  --unit) integrate= && shift ;;
  --integration) build= unit= && shift ;;
esac
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
# Runs "$@" with the sanitizers' reports going to <build>/sanitizer-logs, and
# fails when a test failed or a sanitizer reported.
checked() {
  local logs=$root/$tree/sanitizer-logs
  rm -rf "$logs"
  mkdir -p "$logs"
  local rc=0
  ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:strict_string_checks=1" \
    UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1" \
    TSAN_OPTIONS="log_path=$logs/tsan:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp" \
    "$@" || rc=1
  if [ -n "$(ls -A "$logs")" ]; then
    echo "sanitize: $preset: sanitizer reports:"
    for f in "$logs"/*; do
      echo "== $f"
      cat "$f"
    done
    rc=1
  fi
  return $rc
}

for preset in "${presets[@]}"; do
  tree=build/$preset
  if [ -n "$build" ]; then
    [ -f $tree/build.ninja ] || cmake --preset "$preset" >/dev/null
    cmake --build $tree
  fi
  if [ -n "$unit" ]; then
    echo "sanitize: $preset: unit tests"
    (cd $tree && checked ctest --output-on-failure -j2) || status=1
  fi
  if [ -n "$integrate" ]; then
    echo "sanitize: $preset: integration tests"
    TRAINVITALS_BUILD=$tree PYTHONPATH=python checked "$PYTHON" -m pytest -q -k "$select" \
      "${integration[@]}" || status=1
  fi
done
exit $status
