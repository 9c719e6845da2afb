"""Burns `--procs` processes (one core each) for `--seconds`, then prints the
cores it really got on average ("cores C"): below the count when the machine
is busy. With `--nice N` (negative: ahead of the machine's other work, where
allowed) the burners claim the cores from whatever else runs there: each in a
session of its own whose scheduler group (/proc/self/autogroup, where the
kernel groups by session) gets that nice value, as a plain nice value counts
only within a group."""
import argparse
import multiprocessing
import os
import time


def claim(nice):
    try:
        os.setsid()
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
    except OSError:
        pass  # no autogroups, or not allowed
    try:
        os.nice(nice)
    except OSError:
        pass  # not allowed: the burners share the cores


def burn(seconds, nice):
    if nice:
        claim(nice)
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, default=os.cpu_count())
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--nice", type=int, default=0)
    args = p.parse_args()
    start = time.monotonic()
    workers = [multiprocessing.Process(target=burn, args=(args.seconds, args.nice))
               for _ in range(args.procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    children = os.times().children_user + os.times().children_system
    print("cores", round(children / (time.monotonic() - start), 3), flush=True)
