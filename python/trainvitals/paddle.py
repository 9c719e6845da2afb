"""trainvitals for PaddlePaddle's high-level API: one callback for paddle.Model.

    from trainvitals.paddle import VitalsCallback

    vitals = VitalsCallback()
    model.fit(train_data, eval_data, epochs=5, callbacks=[vitals])
    model.evaluate(eval_data, callbacks=[vitals])

Steps, epochs (with the training logs), the train/eval/predict phases (the
evaluation's logs as eval_... scalars), the share of time training waits for
its next batch (the time between one batch's end and the next one's begin,
where fit() takes the batch from its DataLoader) and, on CUDA, Paddle's
allocator figures. The script is one run however many fit/evaluate/predict calls it
makes: each call adds its phase, and the epochs of a later fit continue the
numbering. ``on_oom_risk=`` says what to do when trainvitals finds the memory
at risk (``fit``'s ``epochs`` is the plan): ``"warn"`` (default: one line),
``"checkpoint"`` (``model.save`` to ``oom_checkpoint`` in the run directory:
``.pdparams`` and ``.pdopt``), ``"stop"`` (``model.stop_training = True``: fit
ends after the epoch) or a function that receives the forecast (a dict;
docs/markers.md). An alert rule with ``stop = true`` (``trainvitals run
--alerts``) stops fit the same way, whatever ``on_oom_risk`` says. Keyword arguments are monitor options (``out=``, ``interval=``,
``quiet=``...), used when no ``trainvitals run`` supervises. ``.monitor`` is
the Monitor, ``.summary`` the run's summary once it ended (alone: at
interpreter exit, or ``.close()``).
"""

from __future__ import annotations

from typing import Dict, List

import paddle

from . import Monitor
from ._gpu_ids import cuda_uuid
from ._hooks import FitHooks, numbers, quiet_hook

__all__ = ["VitalsCallback", "allocator"]

# Entries of Paddle's logs that count batches rather than measure the model.
_NOT_SCALARS = ("step", "steps", "batch_size")


def allocator() -> List[Dict[str, object]]:
    """Paddle's CUDA allocator figures per device; [] without CUDA."""
    if not paddle.device.is_compiled_with_cuda():
        return []
    cuda = paddle.device.cuda
    devices = []
    for i in range(cuda.device_count()):
        figures = {"device": i,
                   "allocated_bytes": float(cuda.memory_allocated(i)),
                   "peak_allocated_bytes": float(cuda.max_memory_allocated(i)),
                   "reserved_bytes": float(cuda.memory_reserved(i)),
                   "peak_reserved_bytes": float(cuda.max_memory_reserved(i))}
        # Paddle's device properties carry no UUID; its device i is CUDA device i.
        uuid = cuda_uuid(i)
        if uuid:
            figures["uuid"] = uuid
        devices.append(figures)
    return devices


class VitalsCallback(FitHooks, paddle.callbacks.Callback):
    """paddle.Model callback that reports steps, epochs and phases to trainvitals."""

    # model.save(path) writes path.pdparams and path.pdopt.
    def _oom_save(self, run_dir: str) -> str:
        return super()._oom_save(run_dir) + ".pdparams"

    # paddle.Model.fit takes each batch from its DataLoader between one batch's
    # on_train_batch_end and the next one's on_train_batch_begin.
    _times_data_wait = True

    @quiet_hook
    def on_train_batch_begin(self, step, logs=None):
        self.monitor.wait_end()

    def __init__(self, **options):
        super().__init__()
        options.setdefault("framework", "paddle")
        options.setdefault("allocator", allocator)
        self._tv_init(Monitor(**options))
        self.monitor._oom.stops_after = "epoch"  # fit checks stop_training after each epoch

    @quiet_hook
    def on_epoch_end(self, epoch, logs=None):
        self.monitor.epoch_end(epoch, logs=numbers(logs, skip=_NOT_SCALARS))

    @quiet_hook
    def on_eval_begin(self, logs=None):
        self._phase_begin("eval")

    @quiet_hook
    def on_eval_end(self, logs=None):
        values = numbers(logs, skip=_NOT_SCALARS)
        if values:
            self.monitor.scalars(**{f"eval_{k}": v for k, v in values.items()})
        self._phase_end("eval")
