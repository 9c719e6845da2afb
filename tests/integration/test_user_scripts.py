"""A user's own short scripts, written from the README's words, under `trainvitals run`.

The examples are ours; these are what a user writes: a Lightning module with the
callback, and a plain PyTorch loop with `trainvitals.torch.monitor()`, each run as
is in the project environment (build/venv) with no workaround of any kind.
"""
import os
import textwrap

import pytest

from conftest import ROOT

VENV_PY = ROOT / "build" / "venv" / "bin" / "python"
EPOCHS = 2

LIGHTNING_SCRIPT = """
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainvitals.lightning import VitalsCallback


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
trainer = L.Trainer(max_epochs=2, callbacks=[VitalsCallback()])
trainer.fit(Model(), DataLoader(data, batch_size=16), DataLoader(data, batch_size=16))
print("val_loss", float(trainer.callback_metrics["val_loss"]))
"""

TORCH_SCRIPT = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import trainvitals.torch

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
train = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=16)

m = trainvitals.torch.monitor()
step = 0
for epoch in range(2):
    with m.epoch(epoch):
        with m.phase("train"):
            model.train()
            for x, y in m.data(train):
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                step += 1
                m.step(step)
        with m.phase("eval"):
            model.eval()
            with torch.no_grad():
                val_loss = sum(nn.functional.cross_entropy(model(x), y) for x, y in train) / 4
        m.scalars(loss=loss.item(), val_loss=val_loss.item())
print("val_loss", val_loss.item())
"""

def run_script(run_tv, tmp_path, monkeypatch, name, text):
    if not VENV_PY.exists():
        pytest.skip(f"{VENV_PY} is missing: `make deps` creates it")
    script = tmp_path / f"{name}.py"
    script.write_text(textwrap.dedent(text))
    path = os.environ.get("PYTHONPATH", "")
    pythonpath = os.pathsep.join(p for p in (str(ROOT / "python"), path) if p)
    # The script's own files (Lightning's lightning_logs/ with its checkpoints) land
    # where it runs, as for a user: in the test's directory.
    monkeypatch.chdir(tmp_path)
    return run_tv([str(VENV_PY), str(script)], name=name, timeout=180,
                  env={"PYTHONPATH": pythonpath})


def check_trained(run):
    output = run.proc.stdout + run.proc.stderr
    assert run.proc.returncode == 0, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert "val_loss" in run.proc.stdout, output[-3000:]
    epochs = run.summary.get("epochs")
    assert epochs, run.summary.keys()
    assert [e["epoch"] for e in epochs] == list(range(EPOCHS)), epochs
    for e in epochs:
        assert e["steps"] > 0, e
        assert e["duration_s"] > 0, e
    assert "eval" in run.summary.get("phases", {}), run.summary.get("phases")


def test_lightning_script(run_tv, tmp_path, monkeypatch):
    run = run_script(run_tv, tmp_path, monkeypatch, "lightning_user", LIGHTNING_SCRIPT)
    check_trained(run)
    # Lightning's own default checkpoint, one per fit, after the last epoch.
    checkpoints = list((tmp_path / "lightning_logs").glob("version_*/checkpoints/*.ckpt"))
    assert [c.name for c in checkpoints] == [f"epoch={EPOCHS - 1}-step={EPOCHS * 4}.ckpt"], \
        checkpoints


def test_torch_script(run_tv, tmp_path, monkeypatch):
    run = run_script(run_tv, tmp_path, monkeypatch, "torch_user", TORCH_SCRIPT)
    check_trained(run)
    epochs = run.summary["epochs"]
    assert [(e["steps"], e.get("complete", True)) for e in epochs] == [(4, True)] * EPOCHS, epochs
    assert all("val_loss" in e.get("logs", {}) for e in epochs), epochs
