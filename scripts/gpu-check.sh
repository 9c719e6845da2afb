#!/usr/bin/env bash
# gpu-check.sh: checks trainvitals against a real NVIDIA GPU in about four
# minutes, with the bundle scripts/device-bundle.sh made (build/device), so that
# the GPU machine needs no package mirror. Each check prints PASS or FAIL with
# its numbers (scripts/gpu_check/compare.py); the script exits 1 when one fails.
#   - a short PyTorch training (scripts/gpu_check/train.py) under `trainvitals
#     run`, with CUDA_VISIBLE_DEVICES naming the GPU by UUID, under
#     trainvitals.torch.monitor() (the native module is built here for this
#     machine's python3), nvidia-smi sampling beside it and the driver's energy
#     counter read at both ends through nvidia-ml-py;
#   - the monitor's own CPU (by thread) and peak memory at 10 Hz beside a job
#     that holds the GPU, with the driver and without; `run -- true` against
#     `true`; one GpuSource tick on the driver (the benchmark);
#   - `check`, `pick`, `top --once` and `profile` (in the training: a CUDA
#     trace's kernels and GPU idle share), `report` and `analyze` on the real
#     GPU; the per-call cost of each NVML query.
# Results: $OUT/summary.txt (the checks), $OUT/report.html and
# $OUT/results.tgz (everything else). TRAIN_SECONDS (default 30);
# GPU_CHECK_TRAIN replaces train.py (a dry run of the script on the fake driver).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-check-out}
W=$ROOT/build/gpu-check/work  # the files that go into results.tgz
rm -rf "$W"
mkdir -p "$OUT" "$W"
TRAIN_SECONDS=${TRAIN_SECONDS:-30}
log() { echo "[gpu-check $(date +%T)] $*" | tee -a "$W/log.txt" >&2; }

# 0. What machine is this.
timeout 20 nvidia-smi -L >"$W/nvidia-smi-L.txt" 2>&1 || log "nvidia-smi -L failed"
timeout 20 nvidia-smi >"$W/nvidia-smi.txt" 2>&1
UUID=$(timeout 20 nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1 | tr -d ' ')
log "GPU 0: $UUID"

# 1. The bundle, and the native module for this python3.
TV=build/device/trainvitals
BENCH=build/device/trainvitals_bench
export LD_LIBRARY_PATH=$ROOT/build/device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! timeout 10 $TV --version >/dev/null 2>&1; then
  export LD_LIBRARY_PATH=$ROOT/build/device/compat:$LD_LIBRARY_PATH
  timeout 10 $TV --version >/dev/null 2>>"$W/log.txt" || { log "the bundle does not run here"; exit 1; }
fi
log "bundle: $($TV --version)"
if timeout 180 scripts/gpu_check/build_core.sh "$ROOT/build/gpu-check/py" >"$W/build-core.txt" 2>&1; then
  export PYTHONPATH=$ROOT/build/gpu-check/py
  python3 -c 'import trainvitals' 2>>"$W/build-core.txt" || log "trainvitals does not import (build-core.txt)"
else
  log "the native module did not build (build-core.txt): no allocator figures"
fi

# 2. The cost of each NVML call with a cached handle; GpuSource ticks on the driver.
timeout 60 g++ -std=c++20 -O2 -I src bench/nvml_calls/nvml_calls.cc -ldl -o build/gpu-check/nvml_calls \
  >>"$W/log.txt" 2>&1 || log "nvml_calls did not build"
timeout 90 $BENCH --benchmark_filter='GpuSourceRealDriver' >"$W/bench.txt" 2>&1 || log "bench failed"

# 3. What trainvitals sees of this machine.
timeout 60 $TV check >"$W/check.txt" 2>&1 || log "check failed"
timeout 60 $TV check --json >"$W/check.json" 2>>"$W/log.txt"
timeout 30 $TV pick >"$W/pick.txt" 2>&1
timeout 30 $TV pick --json >"$W/pick.json" 2>&1

# 4. Training under the monitor, nvidia-smi beside it.
log "training for ${TRAIN_SECONDS}s with nvidia-smi alongside"
energy() {  # the driver's energy counter (mJ) with the time, through nvidia-ml-py
  python3 -c 'import pynvml as n, time; n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(0)
print(f"{time.time():.3f},{n.nvmlDeviceGetTotalEnergyConsumption(h)}")' 2>>"$W/log.txt"
}
energy >"$W/energy.csv"
timeout $((TRAIN_SECONDS + 40)) nvidia-smi \
  --query-gpu=timestamp,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw \
  --format=csv,noheader,nounits -lms 500 >"$W/smi_gpu.csv" 2>/dev/null &
SMI=$!
( end=$((SECONDS + TRAIN_SECONDS + 20))
  while [ $SECONDS -lt $end ]; do
    t0=$(date +%s.%N)
    q=$(timeout 5 nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null)
    t1=$(date +%s.%N)
    echo "$q" | awk -v a="$t0" -v b="$t1" -F', *' 'NF>=2 {s+=$2; n++} END {if (n) printf "%s,%s,%d,%s\n", a, b, n, s}'
    sleep 0.3
  done ) >"$W/smi_apps.csv" &
APPS=$!
( sleep $((TRAIN_SECONDS / 2 + 8)); timeout 20 $TV top --once >"$W/top.txt" 2>&1 ) &
TOP=$!
# A profile of 10 steps with CUDA activity, asked of the running training.
( sleep $((TRAIN_SECONDS / 2)); timeout 60 $TV profile "$W/run" --steps 10 --json \
    >"$W/profile.json" 2>"$W/profile.txt" ) &
PROFILE=$!
CUDA_VISIBLE_DEVICES=$UUID timeout $((TRAIN_SECONDS + 60)) $TV run --out "$W/run" -- \
  python3 "${GPU_CHECK_TRAIN:-scripts/gpu_check/train.py}" "$W/torch.csv" "$TRAIN_SECONDS" >"$W/run.txt" 2>&1 ||
  log "trainvitals run exited $?"
energy >>"$W/energy.csv"
kill $SMI $APPS 2>/dev/null
wait $SMI $APPS $TOP $PROFILE 2>/dev/null
timeout 60 $TV report "$W/run" -o "$OUT/report.html" >"$W/report.txt" 2>&1 || log "report failed"
timeout 60 $TV analyze "$W/run" >"$W/analyze.txt" 2>&1

# 5. The monitor's own cost beside a job that holds the GPU and computes a
# little, with the driver and without it, side by side.
log "monitor cost at 10 Hz, 20 s"
# The per-call cost of each NVML query after the measured window, with the
# jobs' processes still on
# the GPU: back to back, and once a round 100 ms apart.
( sleep 25.5; timeout 40 build/gpu-check/nvml_calls libnvidia-ml.so.1 30 >"$W/calls.json" 2>>"$W/log.txt" ||
  log "nvml_calls failed" ) &
CALLS=$!
timeout 60 python3 scripts/gpu_check/cost.py "$TV" "$W/cost.json" || log "cost.py failed"
wait $CALLS

# 6. What `run` adds to a command that does nothing.
python3 - "$TV" "$W/start.json" <<'PY'
import json, statistics, subprocess, sys, time
def clock(cmd, n=15):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)
import os
bare = clock(["true"])
run = [sys.argv[1], "run", "--quiet", "--runs-dir", "/tmp/tv-true", "--", "true"]
wrapped = clock(run) if subprocess.run(run).returncode == 0 else float("nan")
os.environ["TRAINVITALS_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
no_driver = clock(run)
json.dump({"true_ms": bare, "run_true_ms": wrapped, "added_ms": wrapped - bare,
           "run_true_no_driver_ms": no_driver}, open(sys.argv[2], "w"))
PY

# 7. The checks.
REPORT="$OUT/report.html" python3 scripts/gpu_check/compare.py "$W" | tee "$OUT/summary.txt"
STATUS=${PIPESTATUS[0]}
log "done (exit $STATUS)"
cp "$W/log.txt" "$OUT/log.txt"
tar -czf "$OUT/results.tgz" -C "$(dirname "$W")" "$(basename "$W")" 2>/dev/null
exit "$STATUS"
