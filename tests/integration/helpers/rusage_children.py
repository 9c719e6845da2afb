"""Short-lived children doing the work, their CPU as wait4 reports it.

Usage: rusage_children.py SECONDS CHILD_S. Forks children one after another,
each burning CHILD_S of CPU and exiting, for SECONDS; waits for each with
os.wait4 and adds up the CPU (user + system) its rusage says. Prints
"rusage_cpu_s X" (the children's, plus this process's own so far) and "children N", then
idles 1.5 s so the monitor's last samples see all of it.
"""
import os
import resource
import sys
import time

seconds, child_s = float(sys.argv[1]), float(sys.argv[2])
time.sleep(0.5)
children_cpu = 0.0
n = 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    pid = os.fork()
    if pid == 0:
        end = time.process_time() + child_s
        while time.process_time() < end:
            pass
        os._exit(0)
    _, _, usage = os.wait4(pid, 0)
    children_cpu += usage.ru_utime + usage.ru_stime
    n += 1
me = resource.getrusage(resource.RUSAGE_SELF)
print(f"rusage_cpu_s {children_cpu + me.ru_utime + me.ru_stime:.4f} children {n}", flush=True)
time.sleep(1.5)
