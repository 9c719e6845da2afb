"""A parent holding ~200 MB that forks two workers, each adding ~100 MB of its own.

Summed RSS counts the parent's pages three times (~800 MB); the job's real
footprint is ~400 MB. Everyone lives for HOLD seconds. Prints the worker PIDs,
and, once all have settled, the true footprint: the sum of the three processes'
PSS from /proc/PID/smaps_rollup ("pss_total_bytes N").
"""
import os
import sys
import time

MiB = 1 << 20
HOLD = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0

parent_block = b"\x01" * (200 * MiB)  # touched: every page is resident
workers = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        own = b"\x02" * (100 * MiB)
        time.sleep(HOLD)
        os._exit(0 if own and parent_block else 1)
    workers.append(pid)
print("workers", *workers, flush=True)


def pss(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


time.sleep(min(3.0, HOLD / 2))
print("pss_total_bytes", sum(pss(p) for p in [os.getpid(), *workers]), flush=True)
for pid in workers:
    os.waitpid(pid, 0)
