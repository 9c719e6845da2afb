"""The checks of scripts/gpu-check.sh, from the files it left in one folder:
trainvitals' rows against nvidia-smi, the driver's energy counter, PyTorch's own
allocator figures and the compute-apps query; the monitor's cost; the other
commands' output. Prints one PASS or FAIL line per check (then the tables) and
exits 1 when one fails. Usage: compare.py WORK_DIR"""
import csv
import datetime
import json
import os
import sys

W = sys.argv[1]
MiB = 1048576.0
GPM_KEYS = ("sm_active_ratio", "sm_occupancy_ratio", "tensor_active_ratio", "dram_active_ratio")
results = []  # (ok, name, detail)


def check(ok, name, detail):
    results.append((bool(ok), name, detail))


def path(*parts):
    return os.path.join(W, *parts)


def load_json(*parts):
    try:
        return json.load(open(path(*parts)))
    except (OSError, ValueError):
        return None


def read_csv(name):
    try:
        return list(csv.reader(open(path(name))))
    except OSError:
        return []


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


rows = []
try:
    for line in open(path("run", "samples.jsonl")):
        if line.strip():
            rows.append(json.loads(line))
except OSError:
    pass
rows = [r for r in rows if r.get("gpus")]
full = rows[:-1]  # the last row is closed by the run's end, not by a row tick
meta = load_json("run", "meta.json") or {}
uuid = open(path("nvidia-smi-L.txt")).read().split("UUID: ")[-1].split(")")[0] if os.path.exists(
    path("nvidia-smi-L.txt")) else None


def gpu_id(text):
    """meta.json's GPU id: FNV-1a (64 bits) of the UUID, its low 48 bits (src/sources/gpu_source.cc)."""
    h = 14695981039346656037
    for c in text.encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"gpu-{h & 0xFFFFFFFFFFFF:012x}"


gpu_meta = next((g for g in meta.get("gpus", []) if uuid and g.get("id") == gpu_id(uuid)), None)
index = gpu_meta.get("index") if gpu_meta else None


def gpu(row):
    return next((g for g in row["gpus"] if g.get("index") == index), None)


# torch.csv: t, step, reserved, allocated at every step.
torch_log = []
for r in read_csv("torch.csv")[1:]:
    if len(r) == 4:
        torch_log.append((float(r[0]), int(r[1]), float(r[2]), float(r[3])))


def steady(t_from, t_to):
    """(reserved, allocated) when PyTorch's figures did not move in (t_from, t_to],
    the training logging steps from before t_from to the end of it."""
    window = [(res, alloc) for t, _, res, alloc in torch_log if t_from < t <= t_to]
    before = [(res, alloc) for t, _, res, alloc in torch_log if t <= t_from]
    if not before or torch_log[-1][0] < t_to - 0.25 or len(window) < 3:
        return None
    window.append(before[-1])
    return window[0] if len(set(window)) == 1 else None


# 1. The rows are of the GPU named by UUID.
check(gpu_meta is not None and full, "rows of the GPU named by UUID",
      f"{uuid} is index {index} in meta.json; {len(full)} full rows")

# 2. GPM keys in every full row (Hopper and later).
cc = (gpu_meta or {}).get("compute_capability")
counts = {k: sum(1 for r in full if gpu(r) and k in gpu(r)) for k in GPM_KEYS}
if cc is None or float(cc) >= 9.0:
    check(full and all(n == len(full) for n in counts.values()), "GPM keys in every full row",
          f"compute capability {cc}, {len(full)} full rows: " + ", ".join(f"{k} {n}" for k, n in counts.items()))

# 3. Energy: the counter's joules against power integrated over the same rows.
er = [(r["t"], gpu(r)) for r in full if gpu(r) and "energy_joules" in gpu(r) and "power_watts" in gpu(r)]
if len(er) >= 5:
    counted = er[-1][1]["energy_joules"] - er[0][1]["energy_joules"]
    integrated = sum(g["power_watts"] * (t - er[i - 1][0]) for i, (t, g) in enumerate(er) if i > 0)
    off = abs(counted - integrated) / integrated if integrated > 0 else 1
    check(off <= 0.02, "energy counter against integrated power within 2 %",
          f"{counted:.1f} J counted, {integrated:.1f} J integrated over {er[-1][0] - er[0][0]:.1f} s "
          f"({len(er)} rows): {off * 100:.2f} % apart; energy_source {gpu_meta.get('energy_source') if gpu_meta else '?'}")
else:
    check(False, "energy counter against integrated power within 2 %", f"{len(er)} rows with energy")
ends = [r for r in read_csv("energy.csv") if len(r) == 2]
if len(ends) == 2:
    j = (float(ends[1][1]) - float(ends[0][1])) / 1000
    print(f"(driver counter through nvidia-ml-py around the whole run: {j:.1f} J over "
          f"{float(ends[1][0]) - float(ends[0][0]):.1f} s)")

# 4. The allocator's figures against PyTorch's own, in rows where they held still.
pairs = []
for i in range(1, len(full)):
    g = gpu(full[i])
    held = steady(full[i - 1]["t"] - 1.0, full[i]["t"])
    if g is None or held is None:
        continue
    pairs.append((g.get("allocator_reserved_bytes"), held[0], g.get("allocator_allocated_bytes"), held[1]))
bad = [p for p in pairs if p[0] is None or p[2] is None or abs(p[0] - p[1]) > MiB or abs(p[2] - p[3]) > MiB]
worst = max((max(abs(p[0] - p[1]), abs(p[2] - p[3])) for p in pairs if None not in p), default=None)
check(len(pairs) >= 5 and not bad, "allocator reserved and allocated within 1 MiB of torch.cuda",
      f"{len(pairs)} rows with PyTorch's figures steady, {len(bad)} off; worst "
      + (f"{worst / MiB:.3f} MiB" if worst is not None else "-")
      + (f"; e.g. ours {bad[0][0]} / {bad[0][2]}, torch {bad[0][1]:.0f} / {bad[0][3]:.0f}" if bad else ""))

# 5. The job's GPU memory against one compute-apps query inside a row.
apps = []
for r in read_csv("smi_apps.csv"):
    if len(r) == 4 and num(r[0]) is not None:
        apps.append((float(r[0]), float(r[1]), float(r[3])))
matched = []
for t0, t1, used in apps:
    for i in range(1, len(full)):
        if full[i - 1]["t"] < t0 and t1 <= full[i]["t"]:
            g = gpu(full[i])
            if g and "job_memory_bytes" in g and steady(full[i - 1]["t"] - 1.0, full[i]["t"]):
                matched.append((g["job_memory_bytes"] / MiB, used))
off = [abs(a - b) for a, b in matched]
check(matched and max(off) <= 2, "job GPU memory against nvidia-smi --query-compute-apps",
      f"{len(matched)} queries inside steady rows; worst {max(off):.1f} MiB apart"
      + (f" (ours {matched[0][0]:.1f} MiB, nvidia-smi {matched[0][1]:.0f} MiB)" if matched else "")
      if matched else "no query fell inside a steady row")

# 6. The monitor's own cost at 10 Hz with one GPU, and its start.
cost = load_json("cost.json") or {}
gpu_cost, host_cost = cost.get("with_gpu"), cost.get("without_gpu")
if gpu_cost and host_cost and gpu_cost["alive"] and host_cost["alive"]:
    busiest = sorted(gpu_cost["threads_pct"].items(), key=lambda kv: -kv[1])[:3]
    check(gpu_cost["share_pct"] <= 0.3, "monitor CPU at 10 Hz with one GPU <= 0.3 % of a core",
          f"{gpu_cost['share_pct']:.3f} % with the GPU, {host_cost['share_pct']:.3f} % without the driver "
          f"(by thread: " + ", ".join(f"{k} {v:.3f} %" for k, v in busiest) + "); peak RSS "
          f"{gpu_cost['vm_hwm_kib'] / 1024:.1f} MiB with the GPU, {host_cost['vm_hwm_kib'] / 1024:.1f} MiB without")
else:
    check(False, "monitor CPU at 10 Hz with one GPU <= 0.3 % of a core", f"not measured: {cost}")
for name, c in sorted(cost.items()):
    print(f"(cost {name}: {c['share_pct']:.3f} % of a core; " +
          ", ".join(f"{k} {v:.3f} %" for k, v in sorted(c["threads_pct"].items(), key=lambda kv: -kv[1])[:3]) + ")")
start = load_json("start.json")
if start:
    check(start["added_ms"] <= 20, "run -- true adds <= 20 ms with a driver",
          f"{start['run_true_ms']:.1f} ms against {start['true_ms']:.1f} ms for true: {start['added_ms']:.1f} ms "
          f"added ({start['run_true_no_driver_ms']:.1f} ms without the driver)")
else:
    check(False, "run -- true adds <= 20 ms with a driver", "not measured")


# 7. The commands people look at, on the real GPU.
def text(name):
    try:
        return open(path(name)).read()
    except OSError:
        return ""


name = (gpu_meta or {}).get("name", "NVIDIA")
check(name in text("top.txt"), "top --once shows the GPU", text("top.txt").strip().splitlines()[:1])
check("CUDA_VISIBLE_DEVICES=" in text("pick.txt"), "pick answers", text("pick.txt").strip()[:120])
report = os.environ.get("REPORT", "")  # the page is written beside the results, not in W
size = os.path.getsize(report) if report and os.path.exists(report) else None
check(size and size > 10000, "report writes its page", f"{size} bytes" if size else text("report.txt")[:200])

# A profile of the running training: torch.profiler with CUDA activity.
profiled = load_json("profile.json")
e = profiled[0] if isinstance(profiled, list) and profiled else {}
kernels = e.get("trace_top_kernels") or []
check(kernels and "trace_gpu_idle_share" in e and "trace_h2d_share" in e,
      "profile reads a CUDA trace's kernels, copies and idle share",
      {k: e.get(k) for k in ("dir", "trace_gpu_idle_share", "trace_h2d_share")} | {
          "kernels": kernels[:3]} if e else text("profile.txt")[:200])
busy = [g["util_ratio"] for g in (gpu(r) for r in full) if g and "util_ratio" in g]
if e.get("trace_gpu_idle_share") is not None and busy:
    smi_busy = sorted(busy)[len(busy) // 2]
    traced = 1 - e["trace_gpu_idle_share"]
    check(abs(traced - smi_busy) <= 0.25, "the trace's GPU busy share near the rows' utilization",
          f"trace {traced:.2f}, rows' median {smi_busy:.2f}")

for ok, name_, detail in results:
    print(f"{'PASS' if ok else 'FAIL'}  {name_}: {detail}")


# Tables: the rows against nvidia-smi in the same seconds.
def smi_time(s):
    return datetime.datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()


smi = []
for r in read_csv("smi_gpu.csv"):
    if len(r) >= 6:
        try:
            smi.append((smi_time(r[0]), [num(x) for x in r[1:6]]))
        except ValueError:
            pass
print(f"\n{'against nvidia-smi --query-gpu':32s} {'rows':>5s} {'ours':>10s} {'nvidia-smi':>10s} {'mean|diff|':>11s}")
for label, key, scale, col in [("utilization.gpu %", "util_ratio", 100.0, 0),
                               ("memory.used MiB", "memory_used_bytes", 1 / MiB, 1),
                               ("temperature.gpu C", "temperature_celsius", 1.0, 3),
                               ("power.draw W", "power_watts", 1.0, 4)]:
    pairs = []
    for i in range(1, len(full)):
        g = gpu(full[i])
        window = [v[col] for t, v in smi if full[i - 1]["t"] < t <= full[i]["t"] and v[col] is not None]
        if g and key in g and window:
            pairs.append((g[key] * scale, sum(window) / len(window)))
    if pairs:
        print(f"{label:32s} {len(pairs):5d} {sum(p[0] for p in pairs) / len(pairs):10.1f} "
              f"{sum(p[1] for p in pairs) / len(pairs):10.1f} {sum(abs(a - b) for a, b in pairs) / len(pairs):11.2f}")
try:
    print("\n" + "".join(line for line in open(path("bench.txt")) if "GpuSource" in line))
except OSError:
    pass
calls = load_json("calls.json")
if calls:
    print("\nNVML per-call cost (cached handle): back to back, and once a round 100 ms apart (median)")
    for c in calls.get("calls", []):
        print(f"  {c['call']:45s} rc={c['rc']:<3d} {c['us_per_call']:9.2f} us {c.get('us_spaced_median', 0):9.2f} us")
seen = {}
for r in full:
    for k in gpu(r) or {}:
        seen[k] = seen.get(k, 0) + 1
print(f"\nkeys in the {len(full)} full rows (rows having each):", ", ".join(f"{k} {seen[k]}" for k in sorted(seen)))
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
