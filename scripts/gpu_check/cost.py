"""The monitor's own cost, measured from outside: `trainvitals run` of a job
that holds the GPU (hold.py), once with the driver and once without it
(TRAINVITALS_NVML_LIBRARY pointing nowhere), side by side, at 10 Hz and at 2 Hz
(whether the GPU's share scales with the ticks or with the rows). CPU time from every
thread's /proc/PID/task/TID/schedstat (nanoseconds) over the same 20 s, with
each thread's share by name; peak RSS (VmHWM). Usage: cost.py TRAINVITALS OUT.json"""
import glob
import json
import os
import subprocess
import sys
import time

tv, out_path = sys.argv[1], sys.argv[2]
work = os.path.dirname(os.path.abspath(out_path))
hold = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hold.py")
NO_DRIVER = {"TRAINVITALS_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}
cases = {"with_gpu": ({}, "10"), "without_gpu": (NO_DRIVER, "10"),
         "with_gpu_2hz": ({}, "2"), "without_gpu_2hz": (NO_DRIVER, "2")}
procs = {}
for name, (extra, hz) in cases.items():
    log = open(os.path.join(work, f"cost-{name}.txt"), "w")
    procs[name] = subprocess.Popen([tv, "run", "--sample-hz", hz, "--out", os.path.join(work, f"cost-{name}"), "--",
                                    "python3", hold, "30"], env={**os.environ, **extra},
                                   stdout=log, stderr=subprocess.STDOUT)


def threads(pid):
    """{tid: (name, cpu ns)} of every thread of `pid`."""
    out = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            name = open(f"{task}/comm").read().strip()
            ns = int(open(f"{task}/schedstat").read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        out[os.path.basename(task)] = (name, ns)
    return out


time.sleep(5)
first = {name: threads(p.pid) for name, p in procs.items()}
t0 = time.monotonic()
time.sleep(20)
last = {name: threads(p.pid) for name, p in procs.items()}
seconds = time.monotonic() - t0
result = {}
for name, p in procs.items():
    per_name = {}
    for tid, (comm, ns) in last[name].items():
        before = first[name].get(tid, (comm, 0))[1]
        per_name[comm] = per_name.get(comm, 0) + (ns - before)
    total = sum(per_name.values())
    try:
        hwm = next(int(line.split()[1]) for line in open(f"/proc/{p.pid}/status") if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        hwm = None
    result[name] = {"share_pct": total / 1e9 / seconds * 100, "seconds": seconds, "vm_hwm_kib": hwm,
                    "threads_pct": {k: v / 1e9 / seconds * 100 for k, v in sorted(per_name.items())},
                    "alive": p.poll() is None}
for p in procs.values():
    p.wait()
json.dump(result, open(out_path, "w"), indent=2)
