"""trainvitals for Lightning: one callback.

    from trainvitals.lightning import VitalsCallback

    trainer = lightning.Trainer(callbacks=[VitalsCallback()])
    trainer.fit(model, train, val)
    trainer.test(model, test)

Steps, epochs (with the logged metrics), the train/eval/test/predict phases
(the sanity check before training is none of them), the share of time training
waits for its next batch (from the training batch hooks) and the CUDA
allocator's figures of each rank. The script is one run however many fit, validate, test
and predict calls it makes: each call adds its phase, and the epochs of a later
fit continue the numbering. ``on_oom_risk=`` says what to do when trainvitals
finds the memory at risk (``max_epochs`` is the plan): ``"warn"`` (default: one
line), ``"checkpoint"`` (``trainer.save_checkpoint`` to ``oom_checkpoint.ckpt``
in the run directory), ``"stop"`` (``trainer.should_stop = True``: fit ends
after the batch) or a function that receives the forecast (a dict;
docs/markers.md). With more than one rank the ranks get the risk at different
steps, and Lightning's checkpoint and stop must happen on all at once: there
"checkpoint" and "stop" only warn. An alert rule with ``stop = true``
(``trainvitals run --alerts``) sets ``trainer.should_stop`` the same way,
whatever ``on_oom_risk`` says (one rank only). A ``gpu-memory-leak`` leaves
``torch.cuda.memory_summary()`` in the run directory (``memory_snapshot=True``:
the allocator's history too). Keyword arguments are monitor options (``out=``,
``interval=``, ``quiet=``...), used when no ``trainvitals run`` supervises.
``.monitor`` is the Monitor, ``.summary`` the run's summary once it ended
(alone: at interpreter exit, or ``.close()``).
"""

from __future__ import annotations

import os

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the older package name
    from pytorch_lightning.callbacks import Callback

from . import SOCKET_ENV, Monitor
from ._hooks import CallbackBase, numbers, quiet_hook
from ._run import say_once
from .torch import allocator

__all__ = ["VitalsCallback"]


class VitalsCallback(CallbackBase, Callback):
    """Lightning callback that reports steps, epochs and phases to trainvitals."""

    def __init__(self, **options):
        super().__init__()
        options.setdefault("framework", "lightning")
        options.setdefault("allocator", allocator)
        self.monitor = Monitor(**options)
        self._trainer = None
        self.monitor._oom.save = self._oom_save
        self.monitor._oom.stop = self._oom_stop

    # -- on_oom_risk -----------------------------------------------------
    def _alone(self) -> bool:
        trainer = self._trainer
        if trainer is not None and int(getattr(trainer, "world_size", 1) or 1) > 1:
            say_once("oom-ranks", "with several ranks on_oom_risk only warns: Lightning's "
                                  "checkpoint and stop must happen on every rank at once")
            return False
        return trainer is not None

    def _oom_save(self, run_dir: str):
        if not self._alone():
            return None
        path = os.path.join(run_dir, "oom_checkpoint.ckpt")
        self._trainer.save_checkpoint(path)
        return path

    def _oom_stop(self) -> bool:
        if not self._alone():
            return False
        self._trainer.should_stop = True
        return True

    # -- calls: fit, validate, test, predict -----------------------------
    def _joins(self, trainer) -> bool:
        rank = int(getattr(trainer, "global_rank", 0) or 0)
        if rank > 0 and getattr(trainer, "world_size", 1) > 1 and not os.environ.get(SOCKET_ENV):
            # Ranks launched before rank 0's monitor started cannot reach it;
            # alone, rank 0 speaks for the job (run under `trainvitals run` for all).
            say_once("alone-rank", f"rank {rank}: no `trainvitals run` to report to; "
                                   "rank 0 reports alone")
            self._tv_off = True
            return False
        self.monitor._rank = rank  # before the first call starts the process's run
        return True

    @quiet_hook
    def setup(self, trainer, pl_module, stage=None):
        self._trainer = trainer
        if self._joins(trainer):
            self.monitor.begin_call()

    @quiet_hook
    def teardown(self, trainer, pl_module, stage=None):
        self.monitor.end_call()

    @quiet_hook
    def on_exception(self, trainer, pl_module, exception):
        self.monitor.end_call(cut=True)  # the epoch it cut is recorded as not complete

    # -- training --------------------------------------------------------
    @quiet_hook
    def on_train_start(self, trainer, pl_module):
        self.monitor.phase_begin("train")

    @quiet_hook
    def on_train_end(self, trainer, pl_module):
        self.monitor.phase_end("train")

    # Lightning takes each batch from its data fetcher between one batch's
    # on_train_batch_end and the next one's on_train_batch_start (the epoch's
    # first batch after on_train_epoch_start): that time is data wait.
    @quiet_hook
    def on_train_epoch_start(self, trainer, pl_module):
        # max_epochs: None or -1 without a limit (the monitor ignores both).
        self.monitor.epoch_begin(trainer.current_epoch, epochs=trainer.max_epochs)
        self.monitor.wait_begin()

    @quiet_hook
    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self.monitor.wait_end()

    @quiet_hook
    def on_train_epoch_end(self, trainer, pl_module):
        self.monitor.epoch_end(trainer.current_epoch, logs=numbers(trainer.callback_metrics))

    @quiet_hook
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.monitor.step(trainer.global_step)
        self.monitor.wait_begin()

    # -- evaluation, test and prediction ---------------------------------
    @quiet_hook
    def on_validation_start(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.monitor.phase_begin("eval")

    @quiet_hook
    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.monitor.phase_end("eval")

    @quiet_hook
    def on_test_start(self, trainer, pl_module):
        self.monitor.phase_begin("test")

    @quiet_hook
    def on_test_end(self, trainer, pl_module):
        self.monitor.phase_end("test")

    @quiet_hook
    def on_predict_start(self, trainer, pl_module):
        self.monitor.phase_begin("predict")

    @quiet_hook
    def on_predict_end(self, trainer, pl_module):
        self.monitor.phase_end("predict")
