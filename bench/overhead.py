"""Whole-program overhead of trainvitals, measured from outside.

1. Monitor cost: `trainvitals run` at 10 Hz on a 16-process tree for 60 s; its
   own CPU (all its threads' schedstat run time, excluding the children) over the steady
   middle of the run, as % of one core, and its peak RSS (VmHWM).
2. Start-up cost: `trainvitals run -- true` against bare `true`, median of N runs.

    python3 bench/overhead.py build/release/trainvitals [--seconds 60] [--runs 40]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_seconds(pid):
    """CPU time of all threads of pid (not its children), in ns precision from schedstat."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total / 1e9


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def monitor_cost(cli, seconds, processes):
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([cli, "run", "--quiet", "--out", f"{tmp}/run", "--sample-hz", "10", "--",
                                 sys.executable, f"{HERE}/tree.py", str(processes), str(seconds)],
                                stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()  # the tree exists
        time.sleep(2)
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(seconds - 6)
        c1, t1 = cpu_seconds(proc.pid), time.monotonic()
        hwm = status_kib(proc.pid, "VmHWM")
        proc.wait()
        rows = sum(1 for _ in open(f"{tmp}/run/samples.jsonl"))
    return (c1 - c0) / (t1 - t0) * 100, hwm / 1024, rows


def startup_cost(cli, runs):
    def timed(cmd):
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out.append(time.perf_counter() - t)
        return statistics.median(out)

    with tempfile.TemporaryDirectory() as tmp:
        bare = timed(["true"])
        monitored = timed([cli, "run", "--quiet", "--runs-dir", tmp, "--", "true"])
    return bare * 1000, monitored * 1000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--processes", type=int, default=16)
    p.add_argument("--runs", type=int, default=40)
    a = p.parse_args()
    cpu_pct, rss_mib, rows = monitor_cost(a.cli, a.seconds, a.processes)
    print(f"monitor: {a.processes}-process tree, 10 Hz, {a.seconds:.0f} s run ({rows} rows): "
          f"{cpu_pct:.3f}% of one core (limit 0.2%), peak RSS {rss_mib:.1f} MiB (limit 15 MiB)")
    bare, monitored = startup_cost(a.cli, a.runs)
    print(f"startup: `true` {bare:.2f} ms, `trainvitals run -- true` {monitored:.2f} ms, "
          f"added {monitored - bare:.2f} ms (limit 20 ms), median of {a.runs}")


if __name__ == "__main__":
    main()
