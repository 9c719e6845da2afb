"""psutil reading what one trainvitals tick reads, for the side-by-side ratio.

For the host: per-CPU times, memory, swap, load, per-disk and per-NIC counters.
For each process of the tree rooted at PID: CPU times, memory info, threads,
I/O counters, and its children (found the way psutil finds them).
Prints CPU microseconds per full sample (process_time, so only this process's CPU).

    python3 bench/psutil_peer.py ROOT_PID [ITERATIONS]
"""
import sys
import time

import psutil

root = psutil.Process(int(sys.argv[1]))
iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 200


def one_sample():
    psutil.cpu_times(percpu=True)
    psutil.virtual_memory()
    psutil.swap_memory()
    psutil.getloadavg()
    psutil.disk_io_counters(perdisk=True)
    psutil.net_io_counters(pernic=True)
    procs = [root] + root.children(recursive=True)
    for p in procs:
        try:
            with p.oneshot():
                p.cpu_times()
                p.memory_info()
                p.num_threads()
                p.io_counters()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return len(procs)


n = one_sample()  # warm up
start = time.process_time()
for _ in range(iterations):
    one_sample()
cpu = time.process_time() - start
print(f"psutil_sample_us {cpu / iterations * 1e6:.1f} processes {n}")
