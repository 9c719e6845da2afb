"""Whole-program overhead of trainvitals, measured from outside.

1. Monitor cost: `trainvitals run` at 10 Hz on a tree of 16 (or each given number
   of) processes for 60 s, beside the floor (bench_wake_floor) in the same run; its
   own CPU (all its threads' schedstat run time, excluding the children) over the steady
   middle of the run, as % of one core, and its peak RSS (VmHWM).
2. Start-up cost: `trainvitals run -- true` against bare `true`, median of N runs.
3. Training slowdown (--pairs N): a CPU-bound PyTorch loop (one thread, a small
   MLP) timed inside the script, bare and under `trainvitals run` at 10 Hz, in N
   pairs whose order alternates; the median of the pairs' time ratios.

    python bench/overhead.py build/release/trainvitals [--seconds 60] [--processes 16,64,256]
        [--floor build/release/bench_wake_floor] [--runs 40] [--pairs 0] [--rounds 1]
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
        # The steady middle: past the PSS rounds that follow the tree's forks
        # (a 256-process tree's take its first 10 s: about 1 % of a core then).
        warmup = min(15, seconds / 3)
        time.sleep(warmup)
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(seconds - warmup - 4)
        c1, t1 = cpu_seconds(proc.pid), time.monotonic()
        hwm = status_kib(proc.pid, "VmHWM")
        proc.wait()
        rows = sum(1 for _ in open(f"{tmp}/run/samples.jsonl"))
    return (c1 - c0) / (t1 - t0) * 100, hwm / 1024, rows


def startup_cost(cli, runs, pause_s=0.2):
    """Medians of `true` and of `trainvitals run -- true`, alternating, each after a
    pause: a start finds the machine as a user's does. Back to back, each run found
    the kernel still in the state the one before left it (a cgroup move then skips
    its wait for an RCU grace period), which once hid 15 ms of a real start."""
    def timed(cmd):
        time.sleep(pause_s)
        t = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t

    bare, monitored = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            bare.append(timed(["true"]))
            monitored.append(timed([cli, "run", "--quiet", "--runs-dir", tmp, "--", "true"]))
    return statistics.median(bare) * 1000, statistics.median(monitored) * 1000


# Prints the loop's wall and CPU seconds: start-up and imports are not part of the
# training. CPU seconds show the slowdown even on a machine shared with other load,
# where the wall time mostly measures the share of a core the loop was given.
TORCH_LOOP = """
import sys, time, torch
torch.set_num_threads(1)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
loss_fn = torch.nn.CrossEntropyLoss()
x, y = torch.randn(128, 256), torch.randint(0, 10, (128,))
def steps(n):
    for _ in range(n):
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
steps(20)
t, c = time.perf_counter(), time.process_time()
steps(int(sys.argv[1]))
print(time.perf_counter() - t, time.process_time() - c)
"""


def training_slowdown(cli, pairs, loop_seconds):
    """The loop's time under `trainvitals run` over bare, per pair: (steps, {wall|cpu: ratios})."""
    def loop(steps, monitored, tmp):
        cmd = [sys.executable, "-c", TORCH_LOOP, str(steps)]
        if monitored:
            cmd = [cli, "run", "--quiet", "--sample-hz", "10", "--runs-dir", tmp, "--"] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
        return {"wall": float(out[-2]), "cpu": float(out[-1])}

    with tempfile.TemporaryDirectory() as tmp:
        steps = max(50, int(200 * loop_seconds / loop(200, False, tmp)["wall"]))
        times = {"bare": {"wall": [], "cpu": []}, "run": {"wall": [], "cpu": []}}
        ratios = {"wall": [], "cpu": []}
        for i in range(pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            t = {m: loop(steps, m, tmp) for m in order}
            for k in ratios:
                times["bare"][k].append(t[False][k])
                times["run"][k].append(t[True][k])
                ratios[k].append(t[True][k] / t[False][k])
    return steps, times, ratios


def slowdown_lines(steps, pairs, times, ratios):
    """Markdown rows: wall and CPU time, medians, the median slowdown and the pairs' range."""
    rows = []
    for k, what in (("wall", "wall time"), ("cpu", "CPU time")):
        med = lambda xs: statistics.median(xs)  # noqa: E731
        rows.append(f"| {what} | {med(times['bare'][k]):.3f} s | {med(times['run'][k]):.3f} s | "
                    f"{(med(ratios[k]) - 1) * 100:+.2f}% | {(min(ratios[k]) - 1) * 100:+.2f}% to "
                    f"{(max(ratios[k]) - 1) * 100:+.2f}% |")
    return (f"A CPU-bound PyTorch loop (an MLP, one thread, {steps} steps, timed inside the "
            f"script) bare and under `trainvitals run` at 10 Hz, {pairs} pairs in alternating "
            "order:\n\n| the loop's | bare (median) | under `trainvitals run` (median) | "
            "slowdown, median of the pairs | pairs range |\n|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n")


def floor_cost(floor, seconds):
    """bench_wake_floor's share of a core: a thread waking at 10 Hz to pread 20 /proc files."""
    out = subprocess.run([floor, "20", str(int(seconds))], capture_output=True, text=True,
                         check=True).stdout
    return float(out.split("=")[1].split("%")[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--processes", default="16", help="tree sizes, comma-separated: 16,64,256")
    p.add_argument("--floor", help="bench_wake_floor, run in the same minute for the ratio")
    p.add_argument("--runs", type=int, default=40)
    p.add_argument("--pairs", type=int, default=0, help="paired training runs (needs torch)")
    p.add_argument("--loop-seconds", type=float, default=5)
    p.add_argument("--markdown", help="also write the training slowdown as a Markdown block here")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure each tree size (and the floor) this many times, in an order "
                        "that rotates each round, and take the medians: this machine's "
                        "figures move more between minutes than between sizes")
    a = p.parse_args()
    sizes = list(map(int, a.processes.split(",")))
    floors, runs = [], {n: [] for n in sizes}
    for r in range(a.rounds):
        if a.floor:
            floors.append(floor_cost(a.floor, min(a.seconds, 30)))
        for n in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
            runs[n].append(monitor_cost(a.cli, a.seconds, n))
            if a.rounds > 1:
                print(f"  round {r + 1}: {n} processes {runs[n][-1][0]:.3f}%"
                      + (f", floor {floors[-1]:.3f}%" if a.floor else ""), flush=True)
    floor = statistics.median(floors) if floors else None
    costs = {}
    for n in sizes:
        cpu_pct = statistics.median(c for c, _, _ in runs[n])
        rss_mib = max(m for _, m, _ in runs[n])
        rows = runs[n][0][2]
        costs[n] = cpu_pct
        beside = f", {cpu_pct / floor:.2f}x the floor (aim 1.3x)" if floor else ""
        over = f", median of {a.rounds} rounds" if a.rounds > 1 else ""
        print(f"monitor: {n}-process tree, 10 Hz, {a.seconds:.0f} s run ({rows} rows): "
              f"{cpu_pct:.3f}% of one core (limit 0.2%){beside}, peak RSS {rss_mib:.1f} MiB "
              f"(limit 8 MiB){over}")
    if floor:
        print(f"floor: a thread waking at 10 Hz to pread 20 /proc files: {floor:.3f}% of one core")
    if len(costs) > 1:
        least, most = min(costs.values()), max(costs.values())
        print(f"tick cost from {min(costs)} to {max(costs)} processes: {least:.3f}% to "
              f"{most:.3f}% ({(most / least - 1) * 100:+.0f}%, limit +20%)")
    bare, monitored = startup_cost(a.cli, a.runs)
    print(f"startup: `true` {bare:.2f} ms, `trainvitals run -- true` {monitored:.2f} ms, "
          f"added {monitored - bare:.2f} ms (limit 5 ms), median of {a.runs}")
    if a.pairs:
        steps, times, ratios = training_slowdown(a.cli, a.pairs, a.loop_seconds)
        block = slowdown_lines(steps, a.pairs, times, ratios)
        print("training:", block)
        if a.markdown:
            with open(a.markdown, "w") as f:
                f.write(block)


if __name__ == "__main__":
    main()
