"""A training loop that hangs for a while in one place, then goes on.

`--kind lock`: its main thread waits on a lock another thread holds;
`loader`: a torch DataLoader whose worker sleeps in one item;
`collective`: a gloo all_reduce each step, rank 1 (`--rank`, `--port`) sleeping
before one of them, so rank 0 waits in the collective;
`none`: no hang (a healthy loop). Steps of `--step-s` for `--steps` steps,
the hang before step 30, lasting `--hang-s`."""
import argparse
import os
import threading
import time

import trainvitals

p = argparse.ArgumentParser()
p.add_argument("--kind", required=True, choices=["lock", "loader", "collective", "none"])
p.add_argument("--steps", type=int, default=60)
p.add_argument("--step-s", type=float, default=0.05)
p.add_argument("--hang-s", type=float, default=8)
p.add_argument("--rank", type=int, default=-1)
p.add_argument("--port", type=int, default=0)
args = p.parse_args()
HANG_AT = 30


def batches():
    if args.kind != "loader":
        yield from range(args.steps)
        return
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __len__(self):
            return args.steps

        def __getitem__(self, i):
            time.sleep(args.hang_s if i == HANG_AT else args.step_s)
            return torch.zeros(4)

    yield from DataLoader(Slow(), batch_size=None, num_workers=1, prefetch_factor=1)


if args.kind == "collective":
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=args.rank, world_size=2)
lock = threading.Lock()
m = trainvitals.monitor()
m.epoch(0)
for step, batch in enumerate(m.data(batches())):
    if args.kind != "loader":
        time.sleep(args.step_s)
    if step == HANG_AT and args.kind == "lock":
        lock.acquire()
        threading.Timer(args.hang_s, lock.release).start()
        with lock:  # held by this thread until the timer releases it
            pass
    if step == HANG_AT and args.kind == "collective" and args.rank == 1:
        time.sleep(args.hang_s)
    if args.kind == "collective":
        t = torch.ones(2)
        dist.all_reduce(t)
    m.step()
m.close()
if args.kind == "collective":
    dist.destroy_process_group()
print("done", os.getpid())
