"""A tiny plain PyTorch loop with trainvitals's monitor: epochs, phases and steps by hand.

    python3 examples/torch_monitor.py --epochs 3 --out runs/torch
    trainvitals run -- python3 examples/torch_monitor.py --epochs 3
"""
import argparse

import torch
from torch import nn

import trainvitals.torch


def batches(steps, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(batch_size, 16, generator=g)
        yield x, (x[:, :4].sum(1) > 0).long()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=20, help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--out", help="run directory when not under `trainvitals run`")
    p.add_argument("--interval", type=float, help="seconds per row when not under `trainvitals run`")
    args = p.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    with trainvitals.torch.monitor(out=args.out, interval=args.interval) as m:
        step = 0
        for epoch in range(args.epochs):
            with m.epoch(epoch):
                with m.phase("train"):
                    model.train()
                    # m.data times each next(): the share of time spent waiting for batches.
                    for x, y in m.data(batches(args.steps, args.batch_size, epoch)):
                        opt.zero_grad()
                        loss = loss_fn(model(x.to(device)), y.to(device))
                        loss.backward()
                        opt.step()
                        step += 1
                        m.step(step)
                with m.phase("eval"):
                    model.eval()
                    correct = total = 0
                    with torch.no_grad():
                        for x, y in batches(10, 256, 1000):
                            correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
                            total += len(y)
                m.scalars(loss=loss.item(), val_acc=correct / total)
    print(f"torch: {args.epochs} epochs, val acc {correct / total:.3f}", flush=True)


if __name__ == "__main__":
    main()
