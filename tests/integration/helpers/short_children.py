"""One core of work done by short-lived children, one after another.

Usage: short_children.py SECONDS CHILD_S MODE. Each child burns CHILD_S of CPU
and exits. MODE "wait": this process waits for each (its parent's reaped time
grows); "orphan": an intermediate process forks the child and exits at once, so
the child is re-parented to the subreaper (the supervisor), which reaps it.
Every process writes its own CPU seconds (CLOCK_PROCESS_CPUTIME_ID) at exit; the
total is printed as "cpu_seconds X" with the wall time ("wall_s Y").
"""
import os
import sys
import time

seconds, child_s, mode = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
log = f"/tmp/short_children.{os.getpid()}"
fd = os.open(log, os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_TRUNC, 0o600)


def burn_and_exit():
    end = time.process_time() + child_s
    x = 0
    while time.process_time() < end:
        x += 1
    os.write(fd, f"{time.process_time()}\n".encode())
    os._exit(0)


def lines():
    with open(log) as f:
        return f.read().count("\n")


time.sleep(0.5)
start = time.monotonic()
spawned = 0
while time.monotonic() - start < seconds:
    pid = os.fork()
    if pid == 0:
        if mode == "orphan" and os.fork() != 0:
            os.write(fd, f"{time.process_time()}\n".encode())
            os._exit(0)
        burn_and_exit()
    os.waitpid(pid, 0)
    spawned += 1
    if mode == "orphan":
        while lines() < 2 * spawned:
            time.sleep(0.001)
wall = time.monotonic() - start
time.sleep(0.5)
with open(log) as f:
    children = sum(float(v) for v in f.read().split())
os.unlink(log)
print("children", spawned, "cpu_seconds", children + time.process_time(), "wall_s", wall, flush=True)
