"""trainvitals for Keras (Keras 3, or tf.keras): one callback.

    from trainvitals.keras import VitalsCallback

    vitals = VitalsCallback()
    model.fit(x, y, epochs=5, callbacks=[vitals])
    model.evaluate(xv, yv, callbacks=[vitals])

Steps, epochs (with Keras's logs: loss, metrics), the train/eval/predict phases
and, on GPUs, TensorFlow's allocator figures. The script is one run however
many fit/evaluate/predict calls it makes: each call adds its phase, and the
epochs of a later fit continue the numbering (``initial_epoch`` is respected).
The share of time training waits for its next batch is measured when fit's
input goes through the callback: ``model.fit(vitals.data(gen), ...)`` for a
Python generator or a ``keras.utils.PyDataset`` (in threads). Keras 3 takes
each batch inside ``train_function``, where no hook sees the wait, so the
producer's calls are timed instead (docs/markers.md "Data wait"). Other input
(arrays, ``tf.data``, a PyDataset with ``use_multiprocessing=True``) passes
through untimed: ``training.data_wait_ratio`` stays absent, not 0.
``on_oom_risk=`` says what to do when trainvitals finds the memory at risk
(a leak, or an OOM forecast inside the run; ``fit``'s ``epochs`` is the plan):
``"warn"`` (default: one line), ``"checkpoint"`` (``model.save`` to
``oom_checkpoint.keras`` in the run directory), ``"stop"``
(``model.stop_training = True``: fit ends after the batch) or a function that
receives the forecast (a dict; docs/markers.md). An alert rule with
``stop = true`` (``trainvitals run --alerts``) stops fit the same way, whatever
``on_oom_risk`` says.
``every_n_steps=N`` marks every Nth batch only (the step counts are then in
units of N batches). ``log_dir=`` also writes trainvitals's TensorBoard scalars
there, beside Keras's own. Other keyword arguments are monitor options
(``out=``, ``interval=``, ``quiet=``...), used when no ``trainvitals run``
supervises. ``.monitor`` is the Monitor, ``.summary`` the run's summary once it
ended (alone: at interpreter exit, or ``.close()``).
"""

from __future__ import annotations

import inspect
import sys
from typing import Dict, List

try:
    import keras
    _Callback = keras.callbacks.Callback
except ImportError:  # only TensorFlow's bundled Keras
    from tensorflow import keras
    _Callback = keras.callbacks.Callback

from . import Monitor
from ._gpu_ids import cuda_uuid
from ._hooks import FitHooks, numbers, quiet_hook
from ._input import ProducerClock
from ._run import say_once

__all__ = ["VitalsCallback", "allocator"]


def allocator() -> List[Dict[str, object]]:
    """TensorFlow's per-GPU allocator figures; [] without TensorFlow or GPUs."""
    tf = sys.modules.get("tensorflow")
    if tf is None:  # another Keras backend: no TensorFlow allocator to ask
        return []
    devices = []
    for index, _ in enumerate(tf.config.list_physical_devices("GPU")):
        info = tf.config.experimental.get_memory_info(f"GPU:{index}")
        figures = {"device": index, "allocated_bytes": float(info["current"]),
                   "peak_allocated_bytes": float(info["peak"])}
        # TensorFlow says no UUID (get_device_details: name and compute
        # capability only); its GPU:i is CUDA device i, which the driver names.
        uuid = cuda_uuid(index)
        if uuid:
            figures["uuid"] = uuid
        devices.append(figures)
    return devices


class VitalsCallback(FitHooks, _Callback):
    """Keras callback that reports steps, epochs and phases to trainvitals."""

    _checkpoint_name = "oom_checkpoint.keras"  # model.save's format by its extension

    def __init__(self, every_n_steps: int = 1, log_dir=None, **options):
        super().__init__()
        if log_dir is not None:
            options["tensorboard"] = str(log_dir)
        options.setdefault("framework", "keras")
        options.setdefault("allocator", allocator)
        self._tv_init(Monitor(**options), every_n_steps)
        self._input = None  # the ProducerClock of the input data() wrapped

    def data(self, x):
        """fit's input, timed: a Python generator comes back as a generator
        over it, a ``keras.utils.PyDataset`` as one that times ``__getitem__``.
        Anything else comes back as it is (its wait is not measured)."""
        why = None
        if inspect.isgenerator(x):
            self._input = ProducerClock()
            return self._input.generator(x)
        if _PyDataset is not None and isinstance(x, _PyDataset):
            if not x.use_multiprocessing:
                # Keras's own rule: an enqueuer for more than one worker.
                self._input = ProducerClock(per_epoch=True, ahead=x.workers > 1)
                return _TimedPyDataset(x, self._input)
            why = "its batches are made in other processes (use_multiprocessing=True)"
        say_once("keras-input", f"data wait not timed for this input ({why or type(x).__name__}):"
                 " only a Python generator or a keras.utils.PyDataset in threads is")
        return x

    def _wait_add(self, ns: int) -> None:
        client = self.monitor._client
        if client is not None:
            client.wait_add(ns)

    @quiet_hook
    def on_epoch_begin(self, epoch, logs=None):
        super().on_epoch_begin(epoch, logs)
        if self._input is not None:
            self._input.epoch_begin()
            self._wait_add(0)  # the epoch's timed loop begins

    @quiet_hook
    def on_train_batch_begin(self, batch, logs=None):
        if self._input is not None:
            self._input.step_begin(batch, _batches_per_step(self.model))

    @quiet_hook
    def on_train_batch_end(self, batch, logs=None):
        if self._input is not None:
            self._wait_add(self._input.step_end())
        super().on_train_batch_end(batch, logs)

    @quiet_hook
    def on_epoch_end(self, epoch, logs=None):
        self.monitor.epoch_end(epoch, logs=numbers(logs))

    @quiet_hook
    def on_test_begin(self, logs=None):
        self._phase_begin("eval")

    @quiet_hook
    def on_test_end(self, logs=None):
        self._phase_end("eval")


def _batches_per_step(model) -> int:
    """The batches each of fit's steps takes (``steps_per_execution``: Keras 3's
    attribute, tf.keras's variable)."""
    for name in ("steps_per_execution", "_steps_per_execution"):
        value = getattr(model, name, None)
        if value is not None:
            try:
                return max(1, int(value))
            except (TypeError, ValueError):
                pass
    return 1


# keras.utils.PyDataset (Keras 3); TensorFlow's bundled Keras 2 has none.
_PyDataset = getattr(keras.utils, "PyDataset", None)


class _TimedPyDataset(_PyDataset or object):
    """The user's PyDataset, its ``__getitem__`` timed by a ProducerClock; the
    rest (length, epoch hooks, workers, attributes) is the user's."""

    def __init__(self, dataset, clock: ProducerClock):
        super().__init__(workers=dataset.workers, use_multiprocessing=False,
                         max_queue_size=dataset.max_queue_size)
        self._dataset, self._clock = dataset, clock

    def __getitem__(self, index):
        return self._clock.made_by(self._dataset.__getitem__, index)

    def __len__(self):
        return len(self._dataset)

    @property
    def num_batches(self):
        return self._dataset.num_batches

    def on_epoch_begin(self):
        self._dataset.on_epoch_begin()

    def on_epoch_end(self):
        self._dataset.on_epoch_end()

    def __getattr__(self, name):  # only what this class does not have
        if name.startswith("__") or name in ("_dataset", "_clock"):  # before __init__ (copies)
            raise AttributeError(name)
        return getattr(self._dataset, name)
