"""A tiny Lightning training on synthetic data, watched by trainvitals's callback.

    python3 examples/lightning_train.py --epochs 3 --out runs/lightning
    trainvitals run -- python3 examples/lightning_train.py --epochs 3
"""
import argparse
import logging
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl

from trainvitals.lightning import VitalsCallback


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
        self.loss = nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss(self.net(x), y)
        self.log("loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", self.loss(logits, y))
        self.log("val_acc", (logits.argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def synthetic(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    return TensorDataset(x, (x[:, :4].sum(1) > 0).long())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=20, help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--out", help="run directory when not under `trainvitals run`")
    p.add_argument("--interval", type=float, help="seconds per row when not under `trainvitals run`")
    args = p.parse_args()

    for name in ("lightning", "lightning.pytorch", "pytorch_lightning"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")
    warnings.filterwarnings("ignore", module="pytorch_lightning")
    torch.manual_seed(0)
    train = DataLoader(synthetic(args.steps * args.batch_size, 0), batch_size=args.batch_size,
                       shuffle=True)
    val = DataLoader(synthetic(4 * args.batch_size, 1), batch_size=args.batch_size)
    vitals = VitalsCallback(out=args.out, interval=args.interval)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[vitals])
    trainer.fit(Classifier(), train, val)
    print(f"lightning: {args.epochs} epochs, val acc "
          f"{float(trainer.callback_metrics['val_acc']):.3f}", flush=True)


if __name__ == "__main__":
    main()
