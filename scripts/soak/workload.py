"""The soak's training stand-in, run under `trainvitals run`: a marker stream
(epochs of steps at about 50 steps/s with train/eval phases and scalars, through
the Python package) beside a tree of 64 processes that come and go: 16 shells,
each with 3 `sleep` children, every shell living 1 to 4 s before a new one takes
its place. Every 10 s a short-lived process also connects, sends a few hundred
steps and leaves. Stops after --seconds."""
import argparse
import random
import subprocess
import sys
import time

import trainvitals

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=float, required=True)
p.add_argument("--groups", type=int, default=16, help="shells of 1 + 3 processes")
args = p.parse_args()

rng = random.Random(9)
SHORT_CLIENT = ("import trainvitals\n"
                "with trainvitals.monitor(framework='soak-client') as m:\n"
                "    for i in range(300): m.step(i)\n")


def start_group():
    lives = [rng.uniform(1, 4) for _ in range(3)]
    script = " & ".join(f"sleep {t:.2f}" for t in lives) + " & wait"
    return subprocess.Popen(["sh", "-c", script])


def keep_tree(groups, clients, next_client):
    for i, g in enumerate(groups):
        if g.poll() is not None:
            groups[i] = start_group()
    clients[:] = [c for c in clients if c.poll() is None]
    if time.monotonic() >= next_client:
        clients.append(subprocess.Popen([sys.executable, "-c", SHORT_CLIENT]))
        return next_client + 10
    return next_client


end = time.monotonic() + args.seconds
groups = [start_group() for _ in range(args.groups)]
clients = []
next_client = time.monotonic() + 10
step = 0
epoch = 0
with trainvitals.monitor(framework="soak") as m:
    while time.monotonic() < end:
        with m.epoch(epoch), m.phase("train"):
            for _ in range(500):  # about 10 s of steps
                time.sleep(0.02)
                step += 1
                m.step(step)
                if step % 50 == 0:
                    m.scalars(loss=1.0 / step, lr=0.1)
                    next_client = keep_tree(groups, clients, next_client)
                if step % 10 == 0:
                    next_client = keep_tree(groups, clients, next_client)
                if time.monotonic() >= end:
                    break
        with m.phase("eval"):
            time.sleep(0.5)
        epoch += 1
for g in groups + clients:
    g.wait()
