"""Spawns a process tree of N processes (this one plus N-1 sleeping children) and
holds it for the given seconds. Prints the root PID and flushes once all exist.

    python bench/tree.py 16 60
"""
import os
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
kids = []
for _ in range(n - 1):
    pid = os.fork()
    if pid == 0:
        time.sleep(hold)
        os._exit(0)
    kids.append(pid)
print(os.getpid(), flush=True)
for pid in kids:
    os.waitpid(pid, 0)
