"""One full sample of the host plus a 64-process tree: trainvitals against a bare
loop over the same files and against psutil reading the same values, in one run.

    python3 bench/compare_peers.py build/release/trainvitals_bench
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def bench(binary, flt):
    out = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_format=json",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True).stdout
    res = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            res[b["run_name"]] = b["cpu_time"]  # microseconds (the benchmarks' unit)
    return res


def psutil_us(python, processes):
    tree = subprocess.Popen([python, f"{HERE}/tree.py", str(processes), "120"], stdout=subprocess.PIPE, text=True)
    try:
        root = tree.stdout.readline().strip()
        out = subprocess.run([python, f"{HERE}/psutil_peer.py", root, "300"],
                             capture_output=True, text=True, check=True).stdout.split()
        return float(out[1]), int(out[3])
    finally:
        subprocess.run(["pkill", "-P", str(tree.pid)], check=False)
        tree.kill()
        tree.wait()


def main():
    binary = sys.argv[1]
    python = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/python3"
    r = bench(binary, "Tick|Bare")
    ours, steady, bare = r["BM_TickRow"], r["BM_TickSteady"], r["BM_BareReadsOfARowTick"]
    peer, n = psutil_us(python, 64)
    print(f"{'one full sample, host + 64 processes':<44}{'CPU µs':>10}{'vs trainvitals':>16}")
    print(f"{'trainvitals row tick (every file)':<44}{ours:>10.1f}{1:>15.2f}x")
    print(f"{'trainvitals at 10 Hz (mean tick)':<44}{steady:>10.1f}{steady / ours:>15.2f}x")
    print(f"{'bare open/read/close of the same files':<44}{bare:>10.1f}{bare / ours:>15.2f}x")
    print(f"{f'psutil, same values ({n} processes)':<44}{peer:>10.1f}{peer / ours:>15.2f}x")
    print(f"limits: row tick <= 400 µs ({'ok' if ours <= 400 else 'OVER'}), "
          f"<= 1.3x bare ({ours / bare:.2f}x, {'ok' if ours <= 1.3 * bare else 'OVER'}), "
          f">= 10x cheaper than psutil ({peer / ours:.1f}x, {'ok' if peer >= 10 * ours else 'UNDER'})")


if __name__ == "__main__":
    main()
