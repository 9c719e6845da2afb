#!/usr/bin/env bash
# gpu-check.sh: checks trainvitals' NVML backend on a real NVIDIA GPU in under
# ten minutes. Builds what it can, runs a short PyTorch training that fills and
# frees GPU memory under `trainvitals run` (or, where the full CLI cannot be
# built, under the standalone bench/nvml_calls/gpu_watch), samples nvidia-smi
# in the same seconds, and prints a table of agreement plus the cost of each
# NVML call. Everything lands in $OUT (default ./gpu-check-out).
#
# Where the build dependencies are missing, bring a bundle made here with
# scripts/device-bundle.sh (build/device: the CLI, the benchmarks and their
# shared libraries); it is used first when it runs.
#
# Environment: OUT, TRAIN_SECONDS (default 30), GPU_CHECK_SKIP_FULL=1 to skip
# the CMake build, GPU_CHECK_INCLUDE (a folder holding fmt/ and nlohmann/
# headers for the g++-only build when the system lacks them).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUT"
TRAIN_SECONDS=${TRAIN_SECONDS:-30}
JOBS=$(nproc 2>/dev/null || echo 4)
log() { echo "[gpu-check $(date +%T)] $*" | tee -a "$OUT/log.txt" >&2; }

# 0. What machine is this.
timeout 20 nvidia-smi -L >"$OUT/nvidia-smi-L.txt" 2>&1 || log "nvidia-smi -L failed"
timeout 20 nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
timeout 60 python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())' \
  >"$OUT/torch.txt" 2>&1 || log "python3 cannot import torch"
for tool in cmake ninja g++; do command -v $tool >/dev/null || log "missing: $tool"; done

# 1. A bundle built elsewhere, when it runs here.
TV=""
BENCH=""
if [ -x build/device/trainvitals ] &&
   LD_LIBRARY_PATH=build/device timeout 10 build/device/trainvitals --version >/dev/null 2>&1; then
  log "using the prebuilt bundle in build/device"
  export LD_LIBRARY_PATH=$ROOT/build/device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  TV=build/device/trainvitals
  BENCH=build/device/trainvitals_bench
  GPU_CHECK_SKIP_FULL=1
fi

# 1b. Tools: try to install the missing ones quickly (mirrors may be unreachable).
if [ -z "$TV" ] && ! command -v cmake >/dev/null || ! command -v ninja >/dev/null || ! command -v g++ >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "${GPU_CHECK_SKIP_FULL:-0}" != 1 ]; then
    log "trying apt-get install (90 s at most)"
    timeout 90 apt-get install -y -q cmake ninja-build g++ libfmt-dev nlohmann-json3-dev \
      libcli11-dev libtomlplusplus-dev libgtest-dev libbenchmark-dev >>"$OUT/apt.txt" 2>&1 ||
      log "apt-get install failed (no mirror?): going on with what is here"
  fi
fi

# 2. Build. The full CLI when CMake works; always the standalone tools (g++ only).
if [ -z "$TV" ] && [ "${GPU_CHECK_SKIP_FULL:-0}" != 1 ] && command -v cmake >/dev/null && command -v ninja >/dev/null; then
  log "cmake build (release)"
  if timeout 60 cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DTRAINVITALS_TESTS=OFF -DTRAINVITALS_BENCH=OFF >"$OUT/cmake.txt" 2>&1 &&
     timeout 300 cmake --build build/release -j "$JOBS" >>"$OUT/cmake.txt" 2>&1 &&
     timeout 10 build/release/trainvitals run --help >/dev/null 2>&1; then
    TV=build/release/trainvitals
  else
    log "full build or its run command unavailable (see cmake.txt): using gpu_watch"
  fi
fi
TOOLS=build/gpu-check
mkdir -p "$TOOLS/obj"
if command -v g++ >/dev/null; then
  timeout 60 g++ -std=c++20 -O2 -I src bench/nvml_calls/nvml_calls.cc -ldl -o "$TOOLS/nvml_calls" \
    >>"$OUT/build-tools.txt" 2>&1 || log "nvml_calls did not build"
  INC=()
  [ -n "${GPU_CHECK_INCLUDE:-}" ] && INC=(-I "$GPU_CHECK_INCLUDE")
  [ -d build/device-include ] && INC+=(-I build/device-include)
  if [ -z "$TV" ]; then
    log "g++ build of gpu_watch ($JOBS jobs)"
    SRCS=$(ls src/core/*.cc src/sources/*.cc src/sources/nvml/*.cc bench/nvml_calls/gpu_watch.cc |
           grep -v _test.cc)
    export INC_FLAGS="${INC[*]:-}"
    if echo "$SRCS" | timeout 300 xargs -P "$JOBS" -I{} sh -c \
         'g++ -std=c++20 -O2 -DFMT_HEADER_ONLY -I src $INC_FLAGS -c {} -o '"$TOOLS"'/obj/$(echo {} | tr / _).o' \
         >>"$OUT/build-tools.txt" 2>&1 &&
       timeout 60 g++ "$TOOLS"/obj/*.o -ldl -lpthread -o "$TOOLS/gpu_watch" >>"$OUT/build-tools.txt" 2>&1; then
      :
    else
      log "gpu_watch did not build (see build-tools.txt)"
    fi
  fi
else
  log "no g++: nothing to build here"
fi

# 3. The cost of each NVML call with a cached handle.
if [ -x "$TOOLS/nvml_calls" ]; then
  log "per-call NVML cost"
  timeout 60 "$TOOLS/nvml_calls" >"$OUT/calls.json" 2>>"$OUT/log.txt" || log "nvml_calls failed"
fi

# 3b. What trainvitals sees of this machine; one GpuSource tick on the real
# driver; one nvidia-smi query, for the ratio.
if [ -n "$TV" ]; then
  timeout 60 "$TV" check >"$OUT/check.txt" 2>&1 || log "check failed"
  timeout 60 "$TV" check --json >"$OUT/check.json" 2>>"$OUT/log.txt"
fi
if [ -n "$BENCH" ]; then
  log "GpuSource tick on the real driver"
  timeout 120 "$BENCH" --benchmark_filter='GpuSource|Tick|Bare' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true >"$OUT/bench.txt" 2>&1 || log "bench failed"
fi
python3 - "$OUT/smi_cost.txt" <<'PY'
import statistics, subprocess, sys, time
q = ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used,temperature.gpu,power.draw",
     "--format=csv,noheader,nounits"]
times = []
for _ in range(10):
    t = time.perf_counter()
    subprocess.run(q, capture_output=True, timeout=20)
    times.append((time.perf_counter() - t) * 1000)
open(sys.argv[1], "w").write(f"nvidia-smi --query-gpu: median {statistics.median(times):.1f} ms "
                             f"(min {min(times):.1f}, max {max(times):.1f}, 10 calls)\n")
PY

# 4. Training under the monitor, nvidia-smi beside it.
log "training for ${TRAIN_SECONDS}s with nvidia-smi alongside"
timeout $((TRAIN_SECONDS + 30)) nvidia-smi \
  --query-gpu=timestamp,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw \
  --format=csv,noheader,nounits -lms 500 >"$OUT/smi_gpu.csv" 2>/dev/null &
SMI=$!
( end=$((SECONDS + TRAIN_SECONDS + 15))
  while [ $SECONDS -lt $end ]; do
    now=$(date +%s.%N)
    timeout 5 nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      awk -v t="$now" -F', *' 'NF>=2 {s+=$2; n++} END {if (n) printf "%s,%d,%s\n", t, n, s}'
    sleep 0.5
  done ) >"$OUT/smi_apps.csv" &
APPS=$!
TRAIN=(python3 scripts/gpu_check/train.py "$OUT/torch.csv" "$TRAIN_SECONDS")
ROWS=""
if [ -n "$TV" ]; then
  timeout $((TRAIN_SECONDS + 60)) "$TV" run --out "$OUT/run" -- "${TRAIN[@]}" \
    >"$OUT/run.txt" 2>&1 || log "trainvitals run exited $?"
  ROWS="$OUT/run/samples.jsonl"
elif [ -x "$TOOLS/gpu_watch" ]; then
  "${TRAIN[@]}" >"$OUT/train.txt" 2>&1 &
  JOB=$!
  timeout $((TRAIN_SECONDS + 30)) "$TOOLS/gpu_watch" $((TRAIN_SECONDS + 3)) "$OUT/watch.jsonl" \
    "$OUT/probe.json" "$JOB" 2>"$OUT/watch.txt" || log "gpu_watch exited $?"
  for _ in $(seq 60); do kill -0 "$JOB" 2>/dev/null || break; sleep 0.5; done
  kill "$JOB" 2>/dev/null
  ROWS="$OUT/watch.jsonl"
else
  log "nothing to monitor with: training alone for the nvidia-smi record"
  timeout $((TRAIN_SECONDS + 60)) "${TRAIN[@]}" >"$OUT/train.txt" 2>&1
fi
kill $SMI $APPS 2>/dev/null
wait $SMI $APPS 2>/dev/null

# 5. Agreement table.
if [ -n "$ROWS" ] && [ -s "$ROWS" ]; then
  timeout 60 python3 scripts/gpu_check/compare.py "$OUT" "$ROWS" "$OUT/smi_gpu.csv" \
    "$OUT/smi_apps.csv" "$OUT/torch.csv" "$OUT/calls.json" | tee "$OUT/compare.txt"
else
  log "no rows to compare"
fi
cat "$OUT/smi_cost.txt" 2>/dev/null
grep -E 'GpuSource|Tick|Bare' "$OUT/bench.txt" 2>/dev/null | grep -E 'median|ERROR'
log "done: results in $OUT"
