"""trainvitals beside its peers, in one run on the same process tree.

1. One full sample of the host plus a 64-process tree: trainvitals against a
   bare loop over the same files and against psutil reading the same values.
2. Monitors side by side: `trainvitals attach` and each peer's monitor (psutil
   in a loop, nvitop's ResourceMetricCollector, gpustat, MLflow's system-metrics
   monitor; bench/peers.py) watch the same tree at the same rate, one after the
   other, in interleaved rounds; each one's CPU (all its threads' schedstat run
   time) over a steady window, as % of one core, median of the rounds.

    python bench/compare_peers.py build/release/trainvitals_bench [PYTHON]
        [--cli build/release/trainvitals] [--hz 10] [--window 20] [--rounds 3]
        [--markdown FILE]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from overhead import cpu_seconds

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = ("psutil", "nvitop", "gpustat", "mlflow")


def bench(binary, flt):
    out = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_format=json",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True).stdout
    res = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            res[b["run_name"]] = b["cpu_time"]  # microseconds (the benchmarks' unit)
    return res


class Tree:
    """bench/tree.py: `processes` processes held for `seconds`."""

    def __init__(self, python, processes, seconds):
        self.proc = subprocess.Popen([python, f"{HERE}/tree.py", str(processes), str(seconds)],
                                     stdout=subprocess.PIPE, text=True)
        self.root = int(self.proc.stdout.readline().strip())

    def close(self):
        subprocess.run(["pkill", "-P", str(self.proc.pid)], check=False)
        self.proc.kill()
        self.proc.wait()


def psutil_us(python, root):
    out = subprocess.run([python, f"{HERE}/peers.py", "sample", str(root), "300"],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[1]), int(out[3])


def one_sample_table(binary, python, root):
    r = bench(binary, "Tick|Bare")
    ours, steady, bare = r["BM_TickRow"], r["BM_TickSteady"], r["BM_BareReadsOfARowTick"]
    peer, n = psutil_us(python, root)
    print(f"{'one full sample, host + 64 processes':<44}{'CPU µs':>10}{'vs trainvitals':>16}")
    print(f"{'trainvitals row tick (every file)':<44}{ours:>10.1f}{1:>15.2f}x")
    print(f"{'trainvitals at 10 Hz (mean tick)':<44}{steady:>10.1f}{steady / ours:>15.2f}x")
    print(f"{'bare open/read/close of the same files':<44}{bare:>10.1f}{bare / ours:>15.2f}x")
    print(f"{f'psutil, same values ({n} processes)':<44}{peer:>10.1f}{peer / ours:>15.2f}x")
    print(f"limits: row tick <= 400 µs ({'ok' if ours <= 400 else 'OVER'}), "
          f"<= 1.3x bare ({ours / bare:.2f}x, {'ok' if ours <= 1.3 * bare else 'OVER'}), "
          f">= 10x cheaper than psutil ({peer / ours:.1f}x, {'ok' if peer >= 10 * ours else 'UNDER'})")
    return ours, peer, n


def start_contender(name, a, root, tmp):
    """Starts one monitor on the tree; returns (process, None) once it runs, or (None, why)."""
    if name == "trainvitals":
        proc = subprocess.Popen([a.cli, "attach", "--quiet", "--sample-hz", str(a.hz), "--out",
                                 f"{tmp}/attach-{time.monotonic_ns()}", str(root)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return proc, None
    proc = subprocess.Popen([a.python, f"{HERE}/peers.py", "monitor", name, str(root), str(a.hz)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.wait()
        return None, line.removeprefix("unavailable: ") or proc.stderr.read().strip()[-300:]
    return proc, None


def monitor_cpu(name, a, root, tmp):
    """% of one core the monitor spends over the steady window, or (None, why)."""
    proc, why = start_contender(name, a, root, tmp)
    if proc is None:
        return None, why
    try:
        time.sleep(2)  # past start-up: the first rows, the peer's first records
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(a.window)
        c1, t1 = cpu_seconds(proc.pid), time.monotonic()
        if proc.poll() is not None:
            return None, f"exited with {proc.returncode}: {proc.stderr.read().strip()[-300:]}"
        return (c1 - c0) / (t1 - t0) * 100, None
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT if name == "trainvitals" else signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def monitors_table(a, root, processes):
    contenders = ("trainvitals",) + PEERS
    runs = {n: [] for n in contenders}
    why = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):  # interleaved, so a change in the machine's load hits all alike
            order = contenders if r % 2 == 0 else tuple(reversed(contenders))
            for name in order:
                if name in why:
                    continue
                pct, reason = monitor_cpu(name, a, root, tmp)
                if pct is None:
                    why[name] = reason
                else:
                    runs[name].append(pct)
    ours = statistics.median(runs["trainvitals"])
    rows = []
    for name in contenders:
        if name in why:
            rows.append((name, None, None, why[name]))
        else:
            pct = statistics.median(runs[name])
            rows.append((name, pct, pct / ours, " ".join(f"{p:.3f}" for p in runs[name])))
    print(f"\nmonitors side by side: {processes}-process tree, {a.hz:g} Hz, "
          f"{a.window:g} s window, median of {a.rounds} interleaved rounds")
    print(f"{'monitor':<14}{'% of a core':>12}{'vs trainvitals':>16}  rounds / why not")
    for name, pct, ratio, note in rows:
        if pct is None:
            print(f"{name:<14}{'n/a':>12}{'':>16}  {note}")
        else:
            print(f"{name:<14}{pct:>12.3f}{ratio:>15.1f}x  {note}")
    return rows


WHAT = {
    "trainvitals": "`trainvitals attach`: host CPU, memory, disks, network, and every process "
                   "of the tree; one JSONL row a second",
    "psutil": "psutil in a hand-written loop: the same host and per-process values",
    "nvitop": "nvitop `ResourceMetricCollector`, `collect()` each second; without a GPU it reads "
              "host CPU, memory, swap and load only, no process",
    "gpustat": "gpustat `new_query()`: GPUs and their processes only",
    "mlflow": "MLflow `SystemMetricsMonitor`: host CPU, memory, disk, network, no process; "
              "logs each second to a file store",
}


def markdown(rows, sample, a, processes):
    ours_us, psutil_sample_us, n = sample
    lines = [f"Same machine, same {processes}-process tree, {a.hz:g} Hz, one after the other in "
             f"{a.rounds} interleaved rounds of {a.window:g} s; CPU of every thread of the "
             "monitor's process (schedstat), median. Host only: no GPU driver here.", "",
             "| monitor | what it does | CPU, % of one core | vs trainvitals |", "|---|---|---|---|"]
    for name, pct, ratio, note in rows:
        if pct is None:
            lines.append(f"| {name} | {WHAT[name]} | cannot run here: {note} | |")
        else:
            lines.append(f"| {name} | {WHAT[name]} | {pct:.3f} | {ratio:.1f}× |")
    lines += ["", f"One full sample of the host and {n} processes: trainvitals' row tick "
              f"{ours_us:.0f} µs of CPU, psutil reading the same values {psutil_sample_us:.0f} µs "
              f"({psutil_sample_us / ours_us:.1f}×)."]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bench_binary")
    p.add_argument("python", nargs="?", default=sys.executable)
    p.add_argument("--cli", default=os.path.join(os.path.dirname(p.parse_known_args()[0].bench_binary),
                                                 "trainvitals"))
    p.add_argument("--processes", type=int, default=64)
    p.add_argument("--hz", type=float, default=10)
    p.add_argument("--window", type=float, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--markdown", help="also write the side-by-side as a Markdown block here")
    a = p.parse_args()
    hold = 60 + a.rounds * len(PEERS + ("trainvitals",)) * (a.window + 15)
    tree = Tree(a.python, a.processes, hold)
    try:
        sample = one_sample_table(a.bench_binary, a.python, tree.root)
        rows = monitors_table(a, tree.root, a.processes)
    finally:
        tree.close()
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown(rows, sample, a, a.processes))


if __name__ == "__main__":
    main()
