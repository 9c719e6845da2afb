"""A PyTorch loop whose steps slow down part way, for
tests/integration/test_findings.py's throughput-drop.

    slowdown.py --work-ms W --seconds S [--slower-at T --factor F] [--jitter J] [--pause-every P]

Each step trains a tiny model and works W ms (a spin on the training thread);
from T seconds on, W x F. `--jitter J`: each step's work varies by up to
+-J of it; `--pause-every P`: every P seconds the loop pauses 1 s (as for a
checkpoint). Prints the step rates before and after T by its own clock.
"""
import argparse
import random
import time

import torch
from torch import nn

import trainvitals.torch


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work-ms", type=float, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--slower-at", type=float, default=float("inf"))
    p.add_argument("--factor", type=float, default=1.0)
    p.add_argument("--jitter", type=float, default=0.0)
    p.add_argument("--pause-every", type=float, default=0.0)
    args = p.parse_args()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    counts = {"before": 0, "after": 0}
    rng = random.Random(7)
    with trainvitals.torch.monitor() as m:
        start = next_pause = time.perf_counter()
        print("loop start", time.time(), flush=True)  # the wall clock the findings' times are in
        slower = start + args.slower_at
        while (now := time.perf_counter()) < start + args.seconds:
            if args.pause_every and now >= next_pause + args.pause_every:
                time.sleep(1.0)
                next_pause = time.perf_counter()
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            work = args.work_ms / 1000 * (args.factor if now >= slower else 1.0)
            spin(work * (1 + args.jitter * rng.uniform(-1, 1)))
            m.step()
            counts["after" if now >= slower else "before"] += 1
    end = time.perf_counter()
    before_s = min(args.slower_at, end - start)
    print("rate before", counts["before"] / before_s)
    if counts["after"]:
        print("rate after", counts["after"] / (end - slower))


if __name__ == "__main__":
    main()
