"""A small PyTorch training loop under trainvitals.monitor(), paced at about
`--rate` steps a second, `--steps` steps an epoch, until killed or `--seconds`
have passed; prints its own progress line each epoch, as a training does."""
import argparse
import time

import torch

import trainvitals

p = argparse.ArgumentParser()
p.add_argument("--rate", type=float, default=40)
p.add_argument("--steps", type=int, default=40)
p.add_argument("--seconds", type=float, default=120)
args = p.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 16), torch.randn(64, 1)
end = time.monotonic() + args.seconds
step = 0
with trainvitals.monitor() as m:
    epoch = 0
    while time.monotonic() < end:
        m.epoch(epoch)
        for _ in range(args.steps):
            started = time.monotonic()
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            m.step(step)
            step += 1
            time.sleep(max(0.0, 1 / args.rate - (time.monotonic() - started)))
        print(f"epoch {epoch} loss {loss.item():.4f}", flush=True)
        epoch += 1
