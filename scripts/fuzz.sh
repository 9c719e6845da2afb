#!/usr/bin/env bash
# Fuzzes every libFuzzer target in tests/fuzz for FUZZ_SECONDS each (default
# 180), one after another, in the clang ASan+UBSan build (build/asan).
# New inputs go to build/fuzz/corpus/<target> (the seed corpus in
# tests/fuzz/corpus/<target> is read, never written); a crash is saved as
# build/fuzz/artifacts/<target>/crash-... and fails the run once every target
# has had its turn. tests/fuzz/<target>.dict, where present, is the target's
# dictionary (libFuzzer -dict). To keep a crash as a regression input, copy it into the
# target's seed corpus; ctest replays the seed corpora (label "fuzz").
# FUZZ_JOBS targets (default: one per core) are fuzzed side by side, each on
# one core for its FUZZ_SECONDS, as alone.
#   FUZZ_SECONDS=30 FUZZ_JOBS=2 scripts/fuzz.sh [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-180}
jobs=${FUZZ_JOBS:-$(nproc)}
build=build/asan

[ -f $build/build.ninja ] || cmake --preset asan >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/*_fuzz.cc; do
    name=$(basename "$f" _fuzz.cc)
    targets+=("$name")
  done
fi
cmake --build $build --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# Fuzzes target $1 and says how it went; a crash leaves build/fuzz/$1.crashed.
fuzz_one() {
  local t=$1
  local work=build/fuzz/corpus/$t
  local artifacts=build/fuzz/artifacts/$t
  local log=build/fuzz/$t.log
  local start
  start=$(date +%s)
  local dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  # The targets' scratch files (tests/fuzz/fuzz_file.h) go to a directory of
  # the run's own, removed after it.
  local scratch
  scratch=$(mktemp -d)
  local rc=0
  TMPDIR=$scratch $build/tests/fuzz/fuzz_$t -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 "${dict[@]}" -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  rm -rf "$scratch"
  if [ $rc -eq 0 ]; then
    echo "fuzz: $t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" |
      grep -o '[0-9]*$') inputs in $(($(date +%s) - start)) s, no crash"
  else
    echo "fuzz: $t: CRASH, see $log and $artifacts/"
    touch "build/fuzz/$t.crashed"
  fi
}

for t in "${targets[@]}"; do
  mkdir -p "build/fuzz/corpus/$t" "build/fuzz/artifacts/$t"
  rm -f "build/fuzz/$t.crashed"
done
running=0
for t in "${targets[@]}"; do
  if [ $running -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=()
for t in "${targets[@]}"; do
  if [ -e "build/fuzz/$t.crashed" ]; then
    echo "== build/fuzz/$t.log"
    tail -n 40 "build/fuzz/$t.log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}"
  exit 1
fi
