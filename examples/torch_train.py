"""A small, real PyTorch training: a convolutional classifier on synthetic images.

Data comes from a Dataset that renders noisy shapes on the fly, loaded by a
DataLoader with worker processes, so the job is a process tree like a real one.
Runs on CPU (or CUDA when present) in about 20 seconds.

    trainvitals run -- python3 examples/torch_train.py --epochs 3
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Shapes(Dataset):
    """Class k is a bright square at a position chosen by k, plus noise."""

    def __init__(self, n, size=32, classes=4, seed=0):
        self.n, self.size, self.classes, self.seed = n, size, classes, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        label = i % self.classes
        img = torch.rand(1, self.size, self.size, generator=g) * 0.5
        half = self.size // 2
        r, c = divmod(label, 2)
        img[:, r * half + 4:r * half + 12, c * half + 4:c * half + 12] += 1.0
        return img, label


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    train = DataLoader(Shapes(args.samples), batch_size=args.batch_size, shuffle=True,
                       num_workers=args.workers, persistent_workers=args.workers > 0)
    val = DataLoader(Shapes(args.samples // 4, seed=1), batch_size=256, num_workers=0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 4),
    ).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        start = time.monotonic()
        model.train()
        total = 0.0
        for x, y in train:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val:
                correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / len(train.dataset):.4f} "
              f"val acc {correct / len(val.dataset):.3f} ({time.monotonic() - start:.1f} s)",
              flush=True)


if __name__ == "__main__":
    main()
