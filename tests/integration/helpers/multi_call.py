"""One script, several framework calls, trainvitals callbacks: one run.

    multi_call.py keras|paddle|lightning --epochs E --steps S [--out DIR] [--interval S]

keras, paddle: fit -> evaluate -> predict -> fit (the second fit with a new
callback object; Keras's with initial_epoch=E when --initial-epoch is given,
Paddle's counting from 0 again). lightning: fit -> validate -> test -> predict.
Tiny models on synthetic data (each batch also sleeps --batch-sleep), an
evaluation each epoch. `--fail-hook` makes the
callback's epoch-end fail inside trainvitals (a RuntimeError from its monitor)
in the first fit, to show the training goes on. Prints "done: CALLS" at the end.
"""
import argparse
import os
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
warnings.filterwarnings("ignore")

p = argparse.ArgumentParser()
p.add_argument("framework", choices=["keras", "paddle", "lightning"])
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--batch-size", type=int, default=16)
p.add_argument("--out")
p.add_argument("--interval", type=float)
p.add_argument("--initial-epoch", action="store_true")
p.add_argument("--fail-hook", action="store_true")
p.add_argument("--batch-sleep", type=float, default=0.01,
               help="seconds each batch takes besides the model, so every phase has a time")
args = p.parse_args()
N = args.steps * args.batch_size
options = {"out": args.out, "interval": args.interval}


def inject_failure(callback):
    def broken(*a, **k):
        raise RuntimeError("injected failure inside trainvitals")

    callback.monitor.epoch_end = broken


def pause(*_, **__):
    time.sleep(args.batch_sleep)


def keras_calls():
    import keras
    import numpy as np

    from trainvitals.keras import VitalsCallback

    class Slow(keras.callbacks.Callback):
        on_train_batch_end = on_test_batch_end = on_predict_batch_end = pause

    rng = np.random.default_rng(0)
    x = rng.normal(size=(N, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("float32")
    xv, yv = x[: 2 * args.batch_size], y[: 2 * args.batch_size]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    vitals = VitalsCallback(**options)
    if args.fail_hook:
        inject_failure(vitals)
    fit = dict(batch_size=args.batch_size, validation_data=(xv, yv), verbose=0)
    model.fit(x, y, epochs=args.epochs, callbacks=[vitals, Slow()], **fit)
    model.evaluate(xv, yv, batch_size=args.batch_size, callbacks=[vitals, Slow()], verbose=0)
    model.predict(xv, batch_size=args.batch_size, callbacks=[vitals, Slow()], verbose=0)
    again = VitalsCallback(**options)  # another callback object: still the same run
    if args.initial_epoch:
        model.fit(x, y, epochs=2 * args.epochs, initial_epoch=args.epochs,
                  callbacks=[again, Slow()], **fit)
    else:
        model.fit(x, y, epochs=args.epochs, callbacks=[again, Slow()], **fit)
    return "fit evaluate predict fit"


def paddle_calls():
    import numpy as np
    import paddle

    from trainvitals.paddle import VitalsCallback

    class Slow(paddle.callbacks.Callback):
        on_train_batch_end = on_eval_batch_end = on_predict_batch_end = pause

    class Data(paddle.io.Dataset):
        def __init__(self, n):
            rng = np.random.default_rng(n)
            self.x = rng.normal(size=(n, 8)).astype("float32")
            self.y = (self.x[:, :1] > 0).astype("int64")

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.x[i], self.y[i]

    paddle.seed(0)
    paddle.set_device("cpu")
    net = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.Adam(learning_rate=1e-3, parameters=net.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    train, val = Data(N), Data(2 * args.batch_size)
    vitals = VitalsCallback(**options)
    if args.fail_hook:
        inject_failure(vitals)
    fit = dict(batch_size=args.batch_size, eval_freq=1, drop_last=True, verbose=0)
    model.fit(train, val, epochs=args.epochs, callbacks=[vitals, Slow()], **fit)
    model.evaluate(val, batch_size=args.batch_size, verbose=0, callbacks=[vitals, Slow()])
    model.predict(val, batch_size=args.batch_size, verbose=0, callbacks=[vitals, Slow()])
    model.fit(train, val, epochs=args.epochs, callbacks=[VitalsCallback(**options), Slow()],
              **fit)
    return "fit evaluate predict fit"


def lightning_calls():
    import logging

    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl

    from trainvitals.lightning import VitalsCallback

    for name in ("lightning", "lightning.pytorch", "pytorch_lightning"):
        logging.getLogger(name).setLevel(logging.ERROR)

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))

        def on_train_batch_end(self, *_):
            pause()

        on_validation_batch_end = on_test_batch_end = on_predict_batch_end = on_train_batch_end

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.cross_entropy(self.net(x), y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))

        test_step = validation_step

        def predict_step(self, batch, batch_idx, dataloader_idx=0):
            return self.net(batch[0])

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-3)

    try:
        import torch.distributed._shard.sharded_tensor  # noqa: F401
    except Exception:  # Debian's torch 1.13 under Python 3.11 (see examples/lightning_train.py)
        Model._register_sharded_tensor_state_dict_hooks_if_available = lambda self: None

    torch.manual_seed(0)
    x = torch.randn(N, 8)
    data = TensorDataset(x, (x[:, 0] > 0).long())
    train = DataLoader(data, batch_size=args.batch_size)
    val = DataLoader(TensorDataset(x[: 2 * args.batch_size], (x[: 2 * args.batch_size, 0] > 0)
                                   .long()), batch_size=args.batch_size)
    vitals = VitalsCallback(**options)
    if args.fail_hook:
        inject_failure(vitals)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[vitals])
    model = Model()
    trainer.fit(model, train, val)
    trainer.validate(model, val, verbose=False)
    trainer.test(model, val, verbose=False)
    trainer.predict(model, val)
    return "fit validate test predict"


calls = {"keras": keras_calls, "paddle": paddle_calls, "lightning": lightning_calls}
print(f"done: {calls[args.framework]()}", flush=True)
