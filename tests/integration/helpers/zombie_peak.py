"""The job peaks while its exited workers are zombies (not yet reaped).

A parent holding ~300 MB forks three workers that add ~100 MB each and exit
after a second and a half; while they are zombies the parent adds ~500 MB for
a moment, then frees it and only then reaps them. Prints the true peak: the
parent's PSS at that moment (a zombie holds no memory), "peak_bytes N".
"""
import os
import time

MiB = 1 << 20


def pss(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


time.sleep(0.5)
shared = bytearray(b"\x01") * (300 * MiB)
workers = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        own = bytearray(b"\x02") * (100 * MiB)
        time.sleep(1.5)
        os._exit(0 if own and shared else 1)
    workers.append(pid)
for pid in workers:  # until each has exited, without reaping it: a zombie
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
time.sleep(0.7)
states = []
for pid in workers:
    with open(f"/proc/{pid}/stat") as f:
        states.append(f.read().rsplit(")", 1)[1].split()[0])
burst = bytearray(b"\x03") * (500 * MiB)
peak = pss(os.getpid())
time.sleep(1.0)
del burst
time.sleep(0.5)
for pid in workers:
    os.waitpid(pid, 0)
time.sleep(0.5)
print("states", "".join(states), "peak_bytes", peak, flush=True)
