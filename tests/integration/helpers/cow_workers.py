"""A PyTorch loop whose DataLoader workers leak through copy-on-read.

The dataset holds a Python list of ints made before the workers fork. Every
item a worker reads bumps reference counts on the ints of its slice, so the
pages holding them turn private in that worker: the job's memory (PSS over the
tree) grows while the main process's stays flat, and each worker's RSS counted
the shared pages already. With `numpy` the items live in one numpy array:
reading them writes nothing, and nothing grows.

usage: cow_workers.py {list,numpy} SECONDS"""
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import trainvitals

kind, seconds = sys.argv[1], float(sys.argv[2])
COUNT = 9_000_000
PER_ITEM = 14_000  # ints touched per item: ~0.45 MB of int objects


class Items(Dataset):
    def __init__(self):
        if kind == "list":
            self.data = list(range(10**9, 10**9 + COUNT))
        else:
            self.data = np.arange(10**9, 10**9 + COUNT, dtype=np.int64)

    def __len__(self):
        return COUNT // PER_ITEM

    def __getitem__(self, i):
        # Both workers read every slice: worker w serves items 2k+w.
        lo = (i // 2) * PER_ITEM
        total = 0
        for v in self.data[lo:lo + PER_ITEM]:
            total += int(v) & 1
        time.sleep(0.2)
        return torch.tensor([total], dtype=torch.float32)


loader = DataLoader(Items(), batch_size=1, num_workers=2, persistent_workers=True)
m = trainvitals.monitor()
start = time.time()
with m:
    while time.time() - start < seconds:
        for batch in m.data(loader):
            m.step()
            if time.time() - start >= seconds:
                break
print("done", flush=True)
