"""trainvitals for Lightning: one callback.

    from trainvitals.lightning import VitalsCallback

    trainer = lightning.Trainer(callbacks=[VitalsCallback()])

Steps, epochs (with the logged metrics), the train/eval/predict phases and the
CUDA allocator's figures of each rank. Keyword arguments are monitor options
(``out=``, ``interval=``, ``quiet=``...), used when no ``trainvitals run``
supervises. ``.monitor`` is the Monitor, ``.summary`` the run's summary once
the trainer is done (when the monitor ran alone).
"""

from __future__ import annotations

import os

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the older package name
    from pytorch_lightning.callbacks import Callback

from . import SOCKET_ENV, Monitor, _say
from ._hooks import numbers, quiet_hook
from .torch import allocator

__all__ = ["VitalsCallback"]


class VitalsCallback(Callback):
    """Lightning callback that reports steps, epochs and phases to trainvitals."""

    def __init__(self, **options):
        super().__init__()
        options.setdefault("framework", "lightning")
        options.setdefault("allocator", allocator)
        self.monitor = Monitor(**options)
        self.summary = None
        self._started = False
        self._tv_broken = False

    # -- lifecycle -------------------------------------------------------
    def _start(self, trainer) -> None:
        m = self.monitor
        if self._started:  # setup and on_fit_start both come here
            return
        rank = int(getattr(trainer, "global_rank", 0) or 0)
        if rank > 0 and getattr(trainer, "world_size", 1) > 1 and not os.environ.get(SOCKET_ENV):
            # Ranks launched before rank 0's monitor started cannot reach it;
            # alone, rank 0 speaks for the job (run under `trainvitals run` for all).
            if not getattr(self, "_said_alone", False):
                self._said_alone = True
                _say(f"rank {rank}: no `trainvitals run` to report to; rank 0 reports alone")
            return
        m._rank = rank
        self._started = True
        m.start()

    def _close(self) -> None:
        if self._started:
            self._started = False
            self.summary = self.monitor.close()

    @quiet_hook
    def setup(self, trainer, pl_module, stage=None):
        self._start(trainer)

    @quiet_hook
    def on_fit_start(self, trainer, pl_module):
        self._start(trainer)

    @quiet_hook
    def teardown(self, trainer, pl_module, stage=None):
        self._close()

    @quiet_hook
    def on_exception(self, trainer, pl_module, exception):
        self._close()

    # -- training --------------------------------------------------------
    @quiet_hook
    def on_train_start(self, trainer, pl_module):
        self.monitor.phase_begin("train")

    @quiet_hook
    def on_train_end(self, trainer, pl_module):
        self.monitor.phase_end("train")

    @quiet_hook
    def on_train_epoch_start(self, trainer, pl_module):
        self.monitor.epoch_begin(trainer.current_epoch)

    @quiet_hook
    def on_train_epoch_end(self, trainer, pl_module):
        self.monitor.epoch_end(trainer.current_epoch, logs=numbers(trainer.callback_metrics))

    @quiet_hook
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.monitor.step(trainer.global_step)

    # -- evaluation and prediction ---------------------------------------
    @quiet_hook
    def on_validation_start(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.monitor.phase_begin("eval")

    @quiet_hook
    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.monitor.phase_end("eval")

    @quiet_hook
    def on_predict_start(self, trainer, pl_module):
        self.monitor.phase_begin("predict")

    @quiet_hook
    def on_predict_end(self, trainer, pl_module):
        self.monitor.phase_end("predict")
