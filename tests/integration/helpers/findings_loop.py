"""A plain training loop with trainvitals.monitor() for the findings tests.

`--start-s S`: seconds connected before the first step (slow start);
`--epochs E --train-s T --eval-s V`: epochs of T s of steps then V s of an
eval phase; `--step-s X`: seconds per step; `--stall-s S`: after the last
epoch, seconds alive without a step (stalled); `--rank R`: the rank it says.
Prints "rank R steps N" at the end: the steps it made."""
import argparse
import time

import trainvitals

p = argparse.ArgumentParser()
p.add_argument("--start-s", type=float, default=0)
p.add_argument("--epochs", type=int, default=1)
p.add_argument("--train-s", type=float, default=5)
p.add_argument("--eval-s", type=float, default=0)
p.add_argument("--step-s", type=float, default=0.05)
p.add_argument("--stall-s", type=float, default=0)
p.add_argument("--rank", type=int)
args = p.parse_args()

steps = 0
with trainvitals.monitor(rank=args.rank) as m:
    time.sleep(args.start_s)
    for epoch in range(args.epochs):
        m.epoch_begin(epoch)
        with m.phase("train"):
            end = time.monotonic() + args.train_s
            while time.monotonic() < end:
                time.sleep(args.step_s)
                steps += 1
                m.step(steps)
        if args.eval_s > 0:
            with m.phase("eval"):
                time.sleep(args.eval_s)
        m.epoch_end(epoch)
    time.sleep(args.stall_s)
print("rank", args.rank, "steps", steps, flush=True)
