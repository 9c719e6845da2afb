"""Compares trainvitals' GPU rows with nvidia-smi sampled in the same seconds and
prints a table of agreement; adds the per-call NVML cost. Usage:
  compare.py OUT_DIR ROWS.jsonl SMI_GPU.csv SMI_APPS.csv TORCH.csv CALLS.json"""
import csv
import datetime
import json
import sys


def smi_time(s):
    return datetime.datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


out_dir, rows_path, smi_path, apps_path, torch_path, calls_path = sys.argv[1:7]
rows = []
for line in open(rows_path):
    j = json.loads(line)
    if "gpus" in j and j["gpus"]:
        rows.append(j)

smi = []
for r in csv.reader(open(smi_path)):
    if len(r) >= 6:
        try:
            smi.append((smi_time(r[0]), [num(x) for x in r[1:6]]))
        except ValueError:
            pass
apps = []  # (t, total used MiB of all compute apps)
for r in csv.reader(open(apps_path)):
    if len(r) >= 3 and num(r[0]) is not None:
        apps.append((float(r[0]), num(r[2]) or 0.0))
torch_log = []
for r in csv.DictReader(open(torch_path)):
    torch_log.append((float(r["t"]), float(r["reserved_bytes"])))

MiB = 1048576.0
# (name, our key, scale to the smi unit, smi column)
metrics = [("utilization.gpu %", "util_ratio", 100.0, 0),
           ("memory.used MiB", "memory_used_bytes", 1 / MiB, 1),
           ("temperature.gpu C", "temperature_celsius", 1.0, 3),
           ("power.draw W", "power_watts", 1.0, 4)]
table = []
for name, key, scale, col in metrics:
    diffs = []
    pairs = []
    for row in rows:
        g = row["gpus"][0]
        if key not in g:
            continue
        t1 = row["t"]
        window = [v[col] for t, v in smi if t1 - 1.0 < t <= t1 and v[col] is not None]
        if not window:
            continue
        theirs = sum(window) / len(window)
        ours = g[key] * scale
        diffs.append(abs(ours - theirs))
        pairs.append((ours, theirs))
    if diffs:
        table.append({"metric": name, "rows": len(diffs), "mean_abs_diff": sum(diffs) / len(diffs),
                      "ours_mean": sum(p[0] for p in pairs) / len(pairs),
                      "smi_mean": sum(p[1] for p in pairs) / len(pairs)})
    else:
        table.append({"metric": name, "rows": 0})

# Job GPU memory vs the compute apps' used_memory and torch's reserved memory.
def nearest(series, t):
    best = min(series, key=lambda p: abs(p[0] - t)) if series else None
    return best[1] if best and abs(best[0] - t) < 1.5 else None

for name, series, scale in [("job_memory MiB vs compute-apps used_memory", apps, 1.0),
                            ("job_memory MiB vs torch memory_reserved", torch_log, 1 / MiB)]:
    diffs, pairs = [], []
    for row in rows:
        g = row["gpus"][0]
        if "job_memory_bytes" not in g:
            continue
        theirs = nearest(series, row["t"] - 0.5)
        if theirs is None:
            continue
        ours = g["job_memory_bytes"] / MiB
        theirs *= scale
        diffs.append(abs(ours - theirs))
        pairs.append((ours, theirs))
    entry = {"metric": name, "rows": len(diffs)}
    if diffs:
        entry.update(mean_abs_diff=sum(diffs) / len(diffs), ours_mean=sum(p[0] for p in pairs) / len(pairs),
                     smi_mean=sum(p[1] for p in pairs) / len(pairs))
    table.append(entry)

print(f"{'metric':45s} {'rows':>5s} {'ours':>10s} {'reference':>10s} {'mean|diff|':>11s}")
for e in table:
    if e["rows"]:
        print(f"{e['metric']:45s} {e['rows']:5d} {e['ours_mean']:10.1f} {e['smi_mean']:10.1f} {e['mean_abs_diff']:11.2f}")
    else:
        print(f"{e['metric']:45s}     0   (no overlapping samples)")

calls = None
try:
    calls = json.load(open(calls_path))
    print("\nNVML per-call cost (cached handle):")
    for c in calls.get("calls", []):
        print(f"  {c['call']:45s} rc={c['rc']:<3d} {c['us_per_call']:9.2f} us")
except (OSError, ValueError) as e:
    print(f"\nno per-call timings: {e}")
costs = [r.get("gpu_tick_cost_us") for r in rows if r.get("gpu_tick_cost_us") is not None]
if costs:
    print(f"\nGpuSource tick (all calls, our code + driver): {costs[-1]:.1f} us mean")
keys = sorted(rows[-1]["gpus"][0].keys()) if rows else []
print("\nkeys in the last row:", ", ".join(keys))
json.dump({"table": table, "calls": calls, "tick_cost_us": costs[-1] if costs else None, "keys": keys},
          open(f"{out_dir}/compare.json", "w"), indent=2)
