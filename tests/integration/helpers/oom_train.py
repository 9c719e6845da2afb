"""A tiny training run of one framework whose trainvitals callback (or monitor)
acts on memory risks, for tests/integration/test_oom_risk.py, and on an alert's
request to stop, for tests/integration/test_alert_stop.py.

`--framework torch|keras|lightning|paddle`, `--action warn|stop|checkpoint|callable`,
`--epochs N` planned, `--epoch-s S` seconds per epoch, `--max-s M`: the script
stops itself after M s whatever happens (a callable action also stops it once it
received an oom-forecast). Writes `--result` (JSON): the epochs run, the risks a
callable received, whether the monitor said stop.
`--load PATH`: loads a checkpoint the framework saved instead, prints "loaded".
"""
import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--framework", required=True)
p.add_argument("--action", default="warn")
p.add_argument("--epochs", type=int, default=60)
p.add_argument("--epoch-s", type=float, default=1.0)
p.add_argument("--max-s", type=float, default=60)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--result")
p.add_argument("--load")
p.add_argument("--out", help="torch: alone (no `trainvitals run`), into this run directory")
args = p.parse_args()

received = []
state = {"epochs": 0, "start": None}


def action():
    if args.action != "callable":
        return args.action
    return received.append


def over():
    """The script's own end: the time cap, or a callable that got its forecast."""
    return (time.monotonic() - state["start"] > args.max_s
            or any(r["kind"] == "oom-forecast" for r in received))


def pause():
    time.sleep(args.epoch_s / args.steps)


def result(**more):
    if args.result:
        with open(args.result, "w") as f:
            json.dump({"epochs_run": state["epochs"], "received": received, **more}, f)


def run_torch():
    import torch
    import trainvitals.torch
    model = torch.nn.Linear(4, 1)
    options = {"out": args.out, "interval": 0.5, "quiet": True} if args.out else {}

    def save():  # into the run directory: `trainvitals run`'s, or alone the monitor's own
        path = os.path.join(os.environ["TRAINVITALS_RUN_DIR"], "loop_checkpoint.pt")
        torch.save(model.state_dict(), path)

    m = trainvitals.torch.monitor(total_epochs=args.epochs, on_oom_risk=action(),
                                  checkpoint=save, **options)
    for epoch in range(args.epochs):
        if m.should_stop or over():
            break
        with m.epoch(epoch):
            for _ in range(args.steps):
                model(torch.ones(2, 4)).sum().backward()
                pause()
                m.step()
        state["epochs"] += 1
    result(should_stop=m.should_stop)
    m.close()


def run_keras():
    import numpy as np
    import keras
    from trainvitals.keras import VitalsCallback

    class Clock(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            pause()

        def on_epoch_end(self, epoch, logs=None):
            state["epochs"] += 1
            if over():
                self.model.stop_training = True

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.ones((args.steps * 2, 4), "float32")
    model.fit(x, x[:, :1], batch_size=2, epochs=args.epochs, verbose=0,
              callbacks=[VitalsCallback(on_oom_risk=action()), Clock()])
    result()


def run_lightning():
    import torch
    import lightning
    from trainvitals.lightning import VitalsCallback

    class Net(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            pause()
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    class Clock(lightning.Callback):
        def on_train_epoch_end(self, trainer, pl_module):
            state["epochs"] += 1
            if over():
                trainer.should_stop = True

    try:
        import torch.distributed._shard.sharded_tensor  # noqa: F401
    except Exception:  # Debian's torch fails to import it under Python 3.11
        # Lightning registers sharded-tensor state-dict hooks on torch < 2.1; none are used here.
        Net._register_sharded_tensor_state_dict_hooks_if_available = lambda self: None
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(args.steps, 4)),
                                       batch_size=1)
    trainer = lightning.Trainer(max_epochs=args.epochs, accelerator="cpu", logger=False,
                                enable_checkpointing=False, enable_progress_bar=False,
                                enable_model_summary=False,
                                callbacks=[VitalsCallback(on_oom_risk=action()), Clock()])
    trainer.fit(Net(), data)
    result()


def run_paddle():
    import numpy as np
    import paddle
    from trainvitals.paddle import VitalsCallback

    class Clock(paddle.callbacks.Callback):
        def on_train_batch_end(self, step, logs=None):
            pause()

        def on_epoch_end(self, epoch, logs=None):
            state["epochs"] += 1
            if over():
                self.model.stop_training = True

    class Data(paddle.io.Dataset):
        def __getitem__(self, i):
            return np.ones(4, "float32"), np.ones(1, "float32")

        def __len__(self):
            return args.steps

    model = paddle.Model(paddle.nn.Linear(4, 1), paddle.static.InputSpec([None, 4], "float32", "x"),
                         paddle.static.InputSpec([None, 1], "float32", "y"))
    model.prepare(paddle.optimizer.SGD(parameters=model.parameters()), paddle.nn.MSELoss())
    model.fit(Data(), batch_size=1, epochs=args.epochs, verbose=0,
              callbacks=[VitalsCallback(on_oom_risk=action()), Clock()])
    result()


def load():
    path = args.load
    if args.framework == "keras":
        import keras
        keras.models.load_model(path)
    elif args.framework == "lightning":
        import torch
        ckpt = torch.load(path, weights_only=False)
        assert "state_dict" in ckpt and "epoch" in ckpt, list(ckpt)
    elif args.framework == "paddle":
        import paddle
        net = paddle.nn.Linear(4, 1)
        model = paddle.Model(net)
        model.load(path[: -len(".pdparams")])
    else:
        import torch
        torch.nn.Linear(4, 1).load_state_dict(torch.load(path))
    print("loaded", flush=True)


if args.load:
    load()
    sys.exit(0)
state["start"] = time.monotonic()
os.environ["OOM_TRAIN_PID"] = str(os.getpid())  # alone, the fake driver's job is this process
{"torch": run_torch, "keras": run_keras, "lightning": run_lightning,
 "paddle": run_paddle}[args.framework]()
