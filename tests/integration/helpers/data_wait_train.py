"""Trainings whose data wait is planted, for tests/integration/test_data_wait.py.

    data_wait_train.py FRAMEWORK --sleep-ms S[,S2...] --work-ms W [--work-frees-gil] --truth FILE
        [--workers N] [--batches B]

FRAMEWORK is torch (a plain loop over ``m.data(loader)``), lightning, paddle
or keras (``--input``: a PyDataset or a generator through the callback's
``data()``, a PyDataset as it is, or a tf.data pipeline; ``--trace DIR``: TensorFlow's trace of
the fit, whose wait for input per epoch is the truth then). Each batch's loading sleeps S ms in the dataset (``__getitem__``), each
step does W ms of work on the training thread besides a real tiny model's
forward and backward. The script writes FILE: per epoch its wall time and the
time the dataset slept (the planted wait) and, for the plain loop, the time
its own clock saw in the loader's next(), so the test can compare what
trainvitals measured with the truth.
"""
import argparse
import json
import logging
import os
import threading
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

EPOCHS = 3
BATCHES = 30
BATCH = 8


class Planted:
    """The dataset's sleeps, summed per epoch (across DataLoader threads; not
    worker processes). Batches sleep the given times in turn."""

    def __init__(self, sleeps_ms):
        self.sleeps_s = [ms / 1000.0 for ms in sleeps_ms]
        self.lock = threading.Lock()
        self.slept = 0.0
        self.items = 0  # items loaded so far: BATCH of them make a batch

    def load(self, index):
        with self.lock:
            sleep_s = self.sleeps_s[self.items // BATCH % len(self.sleeps_s)]
            self.items += 1
        if sleep_s <= 0:
            return
        t = time.perf_counter()
        time.sleep(sleep_s / BATCH)  # one item of BATCH: the batch sleeps sleep_s
        with self.lock:
            self.slept += time.perf_counter() - t


WORK_HOLDS_GIL = True


def work(ms):
    """`ms` of work on the training thread: a spin, which holds the thread and
    the GIL as Python does, or (--work-frees-gil) a sleep, as a compiled step
    whose kernels run without the GIL."""
    if not WORK_HOLDS_GIL:
        time.sleep(ms / 1000.0)
        return
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


class Epochs:
    """Per-epoch wall time and planted wait, written to the truth file."""

    def __init__(self, planted, path):
        self.planted, self.path, self.epochs = planted, path, []
        self.next_s = 0.0  # the loop's own clock on the loader's next() (plain PyTorch)

    def begin(self):
        self.t0, self.slept0, self.next0 = time.perf_counter(), self.planted.slept, self.next_s

    def end(self):
        self.epochs.append({"wall_s": time.perf_counter() - self.t0,
                            "slept_s": self.planted.slept - self.slept0,
                            "next_s": self.next_s - self.next0})

    def timed(self, iterable):
        """Yields from `iterable`, adding the time of iter() (a DataLoader starts
        its workers there) and of each next() to next_s."""
        t = time.perf_counter()
        it = iter(iterable)
        self.next_s += time.perf_counter() - t
        while True:
            t = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                return
            finally:
                self.next_s += time.perf_counter() - t
            yield item

    def write(self):
        with open(self.path, "w") as f:
            json.dump({"epochs": self.epochs}, f)


def run_torch(args, planted, epochs):
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Dataset
    import trainvitals.torch

    class Slow(Dataset):
        def __len__(self):
            return BATCHES * BATCH

        def __getitem__(self, i):
            planted.load(i)
            return torch.randn(16), torch.randn(1)

    kw = {}
    if args.workers:
        kw = {"num_workers": args.workers, "prefetch_factor": 8, "persistent_workers": True}
    loader = DataLoader(Slow(), batch_size=BATCH, **kw)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with trainvitals.torch.monitor() as m:
        for epoch in range(EPOCHS):
            with m.epoch(epoch):
                epochs.begin()
                for x, y in m.data(epochs.timed(loader)):
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    work(args.work_ms)
                    m.step()
                epochs.end()


def run_lightning(args, planted, epochs):
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Dataset
    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl
    from trainvitals.lightning import VitalsCallback

    class Slow(Dataset):
        def __len__(self):
            return BATCHES * BATCH

        def __getitem__(self, i):
            planted.load(i)
            return torch.randn(16), torch.randn(1)

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            work(args.work_ms)
            return nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    try:
        import torch.distributed._shard.sharded_tensor  # noqa: F401
    except Exception:  # Debian's torch 1.13 under Python 3.11 (see examples/lightning_train.py)
        Model._register_sharded_tensor_state_dict_hooks_if_available = lambda self: None

    class Truth(pl.Callback):
        def on_train_epoch_start(self, trainer, module):
            epochs.begin()

        def on_train_epoch_end(self, trainer, module):
            epochs.end()

    for name in ("lightning", "lightning.pytorch", "pytorch_lightning"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    trainer = pl.Trainer(max_epochs=EPOCHS, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[VitalsCallback(), Truth()])
    trainer.fit(Model(), DataLoader(Slow(), batch_size=BATCH))


def run_paddle(args, planted, epochs):
    import numpy as np
    import paddle
    from trainvitals.paddle import VitalsCallback

    class Slow(paddle.io.Dataset):
        def __len__(self):
            return BATCHES * BATCH

        def __getitem__(self, i):
            planted.load(i)
            return np.random.rand(16).astype("float32"), np.random.rand(1).astype("float32")

    class Truth(paddle.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            epochs.begin()

        def on_epoch_end(self, epoch, logs=None):
            epochs.end()

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.a, self.b = paddle.nn.Linear(16, 64), paddle.nn.Linear(64, 1)

        def forward(self, x):
            work(args.work_ms)
            return self.b(paddle.nn.functional.relu(self.a(x)))

    paddle.set_device("cpu")
    net = Net()
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.SGD(learning_rate=0.01, parameters=net.parameters()),
                  paddle.nn.MSELoss())
    model.fit(Slow(), batch_size=BATCH, epochs=EPOCHS, verbose=0, num_workers=0,
              callbacks=[VitalsCallback(), Truth()])


def run_keras(args, planted, epochs):
    import numpy as np
    import keras
    from trainvitals.keras import VitalsCallback

    def batch():
        for item in range(BATCH):
            planted.load(item)
        return (np.random.rand(BATCH, 16).astype("float32"),
                np.random.rand(BATCH, 1).astype("float32"))

    class Slow(keras.utils.PyDataset):
        def __init__(self):
            super().__init__(workers=max(1, args.workers))

        def __len__(self):
            return BATCHES

        def __getitem__(self, i):
            return batch()

    def generator():
        while True:
            yield batch()

    bounds = []  # each epoch's (begin, end) in time.time_ns(), the trace's clock

    class Truth(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            epochs.begin()
            bounds.append([time.time_ns(), None])

        def on_epoch_end(self, epoch, logs=None):
            epochs.end()
            bounds[-1][1] = time.time_ns()

        def on_train_batch_end(self, batch, logs=None):
            work(args.work_ms)

    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    vitals = VitalsCallback()
    x, kw = Slow(), {}
    if args.input == "generator":
        x, kw = generator(), {"steps_per_epoch": BATCHES}
    if args.input == "tfdata":  # a tf.data pipeline whose map loads each batch
        import tensorflow as tf
        load = lambda i: tf.numpy_function(lambda _: batch(), [i], (tf.float32, tf.float32))
        shape = lambda x, y: (tf.ensure_shape(x, (BATCH, 16)), tf.ensure_shape(y, (BATCH, 1)))
        x = tf.data.Dataset.range(BATCHES).repeat().map(load).map(shape).prefetch(2)
        kw = {"steps_per_epoch": BATCHES}
    elif args.input != "plain":
        x = vitals.data(x)
    if args.trace:
        import tensorflow as tf
        tf.profiler.experimental.start(args.trace)
    model.fit(x, epochs=EPOCHS, verbose=0, callbacks=[vitals, Truth()], **kw)
    if args.trace:
        tf.profiler.experimental.stop()
        for epoch, (begin, end) in zip(epochs.epochs, bounds):
            epoch["get_next_s"] = get_next_seconds(args.trace, begin, end)


def get_next_seconds(trace_dir, begin_ns, end_ns):
    """TensorFlow's own account of the training thread's wait for its input:
    the time in IteratorGetNextOp between two instants, from the trace."""
    import glob
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    space = xplane_pb2.XSpace()
    path = sorted(glob.glob(f"{trace_dir}/**/*.xplane.pb", recursive=True))[-1]
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    # Its times count from the profile's start, which its "Task Environment" plane says.
    origin = 0
    for plane in space.planes:
        stats = {k: v.name for k, v in plane.stat_metadata.items()}
        for stat in plane.stats:
            if stats.get(stat.metadata_id) == "profile_start_time":
                origin = stat.int64_value or stat.uint64_value
    assert origin, "no profile_start_time in the trace"
    total = 0
    for plane in space.planes:
        names = {k: v.name for k, v in plane.event_metadata.items()}
        for line in plane.lines:
            for e in line.events:
                if names.get(e.metadata_id) != "IteratorGetNextOp::DoCompute":
                    continue
                start = origin + line.timestamp_ns + e.offset_ps // 1000
                end = start + e.duration_ps // 1000
                total += max(0, min(end, end_ns) - max(start, begin_ns))
    return total / 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("framework", choices=["torch", "lightning", "paddle", "keras"])
    p.add_argument("--sleep-ms", default="0",
                   help="each batch's loading; several (30,5): batches take them in turn")
    p.add_argument("--work-ms", type=float, default=10)
    p.add_argument("--work-frees-gil", action="store_true",
                   help="the step's work sleeps (a compiled step's kernels) instead of spinning")
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--truth", required=True)
    p.add_argument("--batches", type=int, default=BATCHES, help="batches per epoch")
    p.add_argument("--input", choices=["plain", "pydataset", "generator", "tfdata"],
                   default="plain", help="keras: fit's input, through VitalsCallback.data() "
                                         "unless plain or tfdata (a tf.data pipeline)")
    p.add_argument("--trace", help="keras: a TensorFlow trace directory; its wait for input "
                                   "per epoch goes into the truth file")
    args = p.parse_args()
    globals()["BATCHES"] = args.batches
    globals()["WORK_HOLDS_GIL"] = not args.work_frees_gil
    planted = Planted([float(ms) for ms in args.sleep_ms.split(",")])
    epochs = Epochs(planted, args.truth)
    globals()[f"run_{args.framework}"](args, planted, epochs)
    epochs.write()


if __name__ == "__main__":
    main()
