"""trainvitals for Keras (Keras 3, or tf.keras): one callback.

    from trainvitals.keras import VitalsCallback

    vitals = VitalsCallback()
    model.fit(x, y, epochs=5, callbacks=[vitals])
    model.evaluate(xv, yv, callbacks=[vitals])

Steps, epochs (with Keras's logs: loss, metrics), the train/eval/predict phases
and, on GPUs, TensorFlow's allocator figures. The script is one run however
many fit/evaluate/predict calls it makes: each call adds its phase, and the
epochs of a later fit continue the numbering (``initial_epoch`` is respected).
The share of time training waits for its next batch is not measured for
Keras (``training.data_wait_ratio`` stays absent, not 0): Keras 3 takes each
batch inside ``train_function`` (a ``tf.function`` calling the tf.data
iterator's ``get_next``), between a batch's begin and end hooks, so the gap
between the hooks reads about 0 even when the job waits for its input most of
the time (docs/markers.md).
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

    @quiet_hook
    def on_epoch_end(self, epoch, logs=None):
        self.monitor.epoch_end(epoch, logs=numbers(logs))

    @quiet_hook
    def on_test_begin(self, logs=None):
        self._phase_begin("eval")

    @quiet_hook
    def on_test_end(self, logs=None):
        self._phase_end("eval")
