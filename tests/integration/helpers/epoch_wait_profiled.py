"""A PyTorch loop whose epochs last about the seconds given, under torch.profiler,
for tests/integration/test_data_wait.py.

    epoch_wait_profiled.py --epoch-seconds 1,4,10 --sleep-ms S --work-ms W [--workers N] --truth FILE

Each batch sleeps S ms in the dataset, each step works W ms; the loop goes
through ``m.data(loader)``. The profiler records the DataLoader's own ranges
(``enumerate(DataLoader)#...__next__``) and each epoch as a range of its own;
FILE gets, per epoch, the time in those loader ranges (and before the first:
the loader's iter(), which starts its workers) and the epoch's wall time by
the profiler: its account of the data-wait share.
"""
import argparse
import json
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import trainvitals.torch

BATCH = 8


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epoch-seconds", required=True)
    p.add_argument("--sleep-ms", type=float, required=True)
    p.add_argument("--work-ms", type=float, required=True)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--truth", required=True)
    args = p.parse_args()
    seconds = [float(s) for s in args.epoch_seconds.split(",")]
    # The batches each epoch takes at the planted pace (the loader's sleep
    # hidden by workers that keep up).
    pace = (args.work_ms + (0 if args.workers else args.sleep_ms)) / 1000.0
    batches = [max(1, round(s / pace)) for s in seconds]

    class Slow(Dataset):
        def __len__(self):
            return max(batches) * BATCH

        def __getitem__(self, i):
            time.sleep(args.sleep_ms / 1000.0 / BATCH)
            return torch.randn(16), torch.randn(1)

    kw = {}
    if args.workers:
        kw = {"num_workers": args.workers, "prefetch_factor": 4, "persistent_workers": True}
    loader = DataLoader(Slow(), batch_size=BATCH, **kw)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        with trainvitals.torch.monitor() as m:
            for epoch, count in enumerate(batches):
                with m.epoch(epoch), torch.profiler.record_function(f"epoch-{epoch}"):
                    for i, (x, y) in enumerate(m.data(loader)):
                        loss = nn.functional.mse_loss(model(x), y)
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        end = time.perf_counter() + args.work_ms / 1000.0
                        while time.perf_counter() < end:
                            pass
                        m.step()
                        if i + 1 == count:
                            break
    events = prof.events()
    spans = {e.name: (e.time_range.start, e.time_range.end) for e in events
             if e.name.startswith("epoch-")}
    loads = [(e.time_range.start, e.time_range.end) for e in events
             if e.name.startswith("enumerate(DataLoader)")]
    truth = []
    for epoch in range(len(batches)):
        begin, end = spans[f"epoch-{epoch}"]
        inside = [(max(a, begin), min(b, end)) for a, b in loads if a < end and b > begin]
        # The loader's iter() (it starts the workers) has no range of its own:
        # it is the time from the epoch's begin to the first next().
        loader_us = sum(b - a for a, b in inside) + (min(inside)[0] - begin if inside else 0)
        truth.append({"wall_s": (end - begin) / 1e6, "loader_s": loader_us / 1e6})
    with open(args.truth, "w") as f:
        json.dump({"epochs": truth}, f)


if __name__ == "__main__":
    main()
