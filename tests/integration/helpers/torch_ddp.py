"""Two DDP ranks (gloo on CPU), each with its own trainvitals.torch monitor.

    python torch_ddp.py EPOCHS STEPS
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

import trainvitals.torch

WORLD = 2


def worker(rank, init_file, epochs, steps):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(),
                                                              nn.Linear(32, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(rank)
    with trainvitals.torch.monitor(rank=rank) as m:
        for epoch in range(epochs):
            with m.epoch(epoch):
                with m.phase("train"):
                    for _ in range(steps):
                        x = torch.randn(32, 16, generator=g)
                        opt.zero_grad()
                        loss_fn(model(x), (x[:, :4].sum(1) > 0).long()).backward()  # all-reduce
                        opt.step()
                        m.step()
                with m.phase("eval"), torch.no_grad():
                    model(torch.randn(256, 16, generator=g))
                    dist.barrier()
    dist.destroy_process_group()


def main():
    epochs, steps = int(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(os.path.join(tmp, "init"), epochs, steps), nprocs=WORLD)


if __name__ == "__main__":
    main()
