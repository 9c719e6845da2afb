"""A plain PyTorch loop whose input is planted, for tests/integration/test_findings_input.py.

    input_train.py --seconds S --sleep-ms L --work-ms W [--transform-ms T] [--workers N]
                   [--ranks 2 --slow-rank R] [--waits FILE]

Each batch's loading sleeps L ms in the dataset (and spins T ms: a CPU-heavy transform), each step spins W ms on the
training thread beside a tiny model's forward and backward, for about S seconds.
With --ranks 2 it runs two DistributedDataParallel ranks (gloo, CPU), each its
own process and marker client, and only rank R's dataset sleeps: the ranks
synchronise at every step, so R holds the other back. Prints "planted R" with
the share of the loop's wall time the dataset slept (rank R's, or the one rank's;
0 with workers, whose sleeps are not the loop's wait), and "fetched F" with
the share it waited for batches by its own clock (the sleeps plus the loading
work, which a slow machine makes longer). With --waits it writes each of those
waits to FILE as [wall-clock start, seconds], the oracle of any window's share.
"""
import argparse
import json
import os
import time

import torch
import trainvitals
import trainvitals.torch

BATCH = 8


class Sleepy(torch.utils.data.Dataset):
    def __init__(self, n, sleep_ms, transform_ms=0):
        self.n, self.sleep_s, self.transform_ms = n, sleep_ms / 1000.0, transform_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.sleep_s > 0:
            time.sleep(self.sleep_s / BATCH)  # the batch of BATCH items sleeps sleep_ms
        if self.transform_ms > 0:
            spin(self.transform_ms / BATCH)  # a CPU-heavy transform: transform_ms a batch
        return torch.randn(16), torch.randn(1)


def spin(ms):
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


def train(args, rank=-1):
    sleep_ms = args.sleep_ms if rank in (-1, args.slow_rank) else 0
    model = torch.nn.Linear(16, 1)
    if rank >= 0:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # The same batches on every rank (DDP steps them together).
    per_batch = args.work_ms + args.sleep_ms + args.transform_ms
    batches = max(1, int(args.seconds * 1000 / max(per_batch, 1)))
    ahead = dict(persistent_workers=True, prefetch_factor=8) if args.workers else {}
    transform_ms = args.transform_ms if rank in (-1, args.slow_rank) else 0
    loader = torch.utils.data.DataLoader(Sleepy(batches * BATCH, sleep_ms, transform_ms),
                                         batch_size=BATCH,
                                         num_workers=args.workers, **ahead)
    m = trainvitals.torch.monitor(rank=rank if rank >= 0 else None)
    start = time.perf_counter()
    fetched = 0.0  # the loop's own count of its waits for a batch: sleeps and loading work
    ready = start
    waits = []
    for x, y in m.data(loader):
        waited = time.perf_counter() - ready
        fetched += waited
        waits.append([time.time() - waited, waited])
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        spin(args.work_ms)
        m.step()
        ready = time.perf_counter()
    wall = time.perf_counter() - start
    m.close()
    if rank in (-1, args.slow_rank):
        # With workers the sleeps are theirs, not the loop's wait: nothing planted.
        planted = 0.0 if args.workers else batches * sleep_ms / 1000.0 / wall
        print("planted", planted, "fetched", fetched / wall, flush=True)
        if args.waits:
            with open(args.waits, "w") as f:
                json.dump(waits, f)


def rank_main(rank, args):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=args.ranks)
    train(args, rank)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--sleep-ms", type=float, default=0)
    p.add_argument("--work-ms", type=float, default=20)
    p.add_argument("--transform-ms", type=float, default=0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--port", type=int, default=29517)
    p.add_argument("--waits")
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.ranks > 1:
        torch.multiprocessing.spawn(rank_main, args=(args,), nprocs=args.ranks)
    else:
        train(args)
