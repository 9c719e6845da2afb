"""A plain DistributedDataParallel loop for tests/integration/test_multinode.py,
launched by torchrun on each node (gloo, CPU, one thread per rank).

    multinode_train.py --seconds S --sleep-ms L --slow-rank R --device-ms D --truth DIR

A small MLP learns random points, fed by a DataLoader over a DistributedSampler
and timed by trainvitals' PyTorch glue (`m.data(loader)`, `m.step()`). Each step
waits D ms after its optimizer step, as a training thread waits for its
device's kernels. On global rank R (none when R is -1) the loader's collate
sleeps L ms for every batch, so R waits that long for its data at every step
while the other ranks wait for it in the all-reduce. Epochs of --batches
steps go on until rank 0 has trained S seconds (its word, broadcast after each
epoch, ends every rank at the same step). Each rank then writes
DIR/rank<N>.json: its host name, steps, training wall time, the sleep planted
in each batch and its own clock's wait for batches.
"""
import argparse
import json
import os
import socket
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torch.utils.data.dataloader import default_collate

import trainvitals.torch

BATCH = 32
FEATURES = 32
CLASSES = 4


class SlowCollate:
    """default_collate, after sleeping `sleep_s` (a costly decode or augmentation)."""

    def __init__(self, sleep_s):
        self.sleep_s = sleep_s

    def __call__(self, items):
        if self.sleep_s > 0:
            time.sleep(self.sleep_s)
        return default_collate(items)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=25)
    p.add_argument("--sleep-ms", type=float, default=0)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--device-ms", type=float, default=35)
    p.add_argument("--batches", type=int, default=40, help="steps per epoch on each rank")
    p.add_argument("--truth", required=True)
    args = p.parse_args()

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same first weights on every rank (DDP also broadcasts them)

    g = torch.Generator().manual_seed(1)
    x = torch.randn(args.batches * BATCH * world, FEATURES, generator=g)
    y = (x[:, :CLASSES].argmax(1)).long()
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    sleep_s = args.sleep_ms / 1000.0 if rank == args.slow_rank else 0.0
    loader = DataLoader(dataset, batch_size=BATCH, sampler=sampler, collate_fn=SlowCollate(sleep_s))

    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()

    steps, fetched = 0, 0.0
    with trainvitals.torch.monitor() as m:
        start = time.perf_counter()
        epoch = 0
        while True:
            sampler.set_epoch(epoch)
            with m.epoch(epoch):
                ready = time.perf_counter()
                for xb, yb in m.data(loader):
                    fetched += time.perf_counter() - ready
                    opt.zero_grad()
                    loss = loss_fn(model(xb), yb)
                    loss.backward()  # DDP's all-reduce: every rank waits for the slowest
                    opt.step()
                    time.sleep(args.device_ms / 1000.0)
                    m.step()
                    steps += 1
                    ready = time.perf_counter()
            epoch += 1
            done = torch.tensor([int(time.perf_counter() - start >= args.seconds)])
            dist.broadcast(done, src=0)
            if done.item():
                break
        wall = time.perf_counter() - start

    truth = {"rank": rank, "local_rank": int(os.environ.get("LOCAL_RANK", -1)),
             "world": world, "host": socket.gethostname(), "steps": steps, "epochs": epoch,
             "train_s": wall, "sleep_per_batch_s": sleep_s, "fetched_s": fetched,
             "loss": float(loss)}
    path = os.path.join(args.truth, f"rank{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(truth, f)
    os.replace(path + ".tmp", path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
