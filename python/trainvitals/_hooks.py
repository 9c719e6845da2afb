"""What the framework callbacks share: quiet hooks and log values as numbers."""

from __future__ import annotations

import functools
import math
import os
from typing import Dict, Iterable, Optional

from ._run import say


def quiet_hook(method):
    """Runs a callback hook; no exception ever leaves it into the training.

    A failure inside trainvitals is said once, what the callback had open ends,
    and the callback does nothing more; the process's run goes on (its summary
    still comes at exit).
    """

    @functools.wraps(method)
    def hook(self, *args, **kwargs):
        if getattr(self, "_tv_off", False):
            return None
        try:
            return method(self, *args, **kwargs)
        except Exception as e:  # never stop the training for us
            self._tv_off = True
            say(f"{type(self).__name__} off for this run: {type(e).__name__}: {e}")
            try:
                self.monitor.end_call()
            except Exception:
                pass
            return None

    return hook


def number(value) -> Optional[float]:
    """A plain float from a log value (float, numpy or framework scalar, one-element list)."""
    if isinstance(value, (list, tuple)):
        return number(value[0]) if len(value) == 1 else None
    if isinstance(value, bool):
        return None
    if not isinstance(value, (int, float)):
        try:
            numel = getattr(value, "numel", None)  # torch and paddle tensors
            count = numel() if callable(numel) else getattr(value, "size", 1)  # numpy
            if int(count) != 1:
                return None
            if hasattr(value, "item"):
                value = value.item()
        except Exception:
            return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def numbers(logs, skip: Iterable[str] = ()) -> Dict[str, float]:
    """The numeric entries of a framework's logs dict."""
    out: Dict[str, float] = {}
    if not logs:
        return out
    skip = set(skip)
    for name, value in dict(logs).items():
        if name in skip:
            continue
        v = number(value)
        if v is not None:
            out[str(name)] = v
    return out


class CallbackBase:
    """What every trainvitals callback offers besides its hooks."""

    monitor = None  # the Monitor, set by the callback's constructor
    _tv_off = False  # after a failure: the hooks do nothing

    @property
    def summary(self) -> Optional[dict]:
        """The run's summary once it ended (alone: at interpreter exit or close())."""
        return self.monitor.summary

    def close(self) -> Optional[dict]:
        """Ends the process's run now instead of at interpreter exit; returns its summary."""
        try:
            return self.monitor.close()
        except Exception as e:
            say(f"close: {type(e).__name__}: {e}")
            return None


class FitHooks(CallbackBase):
    """The hooks Keras and Paddle callbacks share (same names, same arguments):
    train begin/end, epochs, train batches, predict. Each callback adds its
    epoch end and evaluation hooks. fit() is one call of the script; evaluate()
    and predict() outside fit() are calls of their own, with their phase. Put it
    before the framework's Callback base.

    A callback whose framework fetches each batch between one batch's end hook
    and the next one's begin hook sets ``_times_data_wait``: that gap, and the
    fetch of an epoch's first batch after its begin hook, count as data wait."""

    _times_data_wait = False
    # The file on_oom_risk="checkpoint" saves the model to, in the run directory.
    _checkpoint_name = "oom_checkpoint"

    def _tv_init(self, monitor, every_n_steps: int = 1) -> None:
        self.monitor = monitor
        self.every_n_steps = max(1, int(every_n_steps))
        self._steps = 0
        self._own_call = None  # the phase of a call this callback began outside fit()
        monitor._oom.save = self._oom_save
        monitor._oom.stop = self._oom_stop

    # on_oom_risk (and an alert's stop): both frameworks' models have save() and stop_training.
    def _oom_save(self, run_dir: str) -> str:
        path = os.path.join(run_dir, self._checkpoint_name)
        self.model.save(path)
        return path

    def _oom_stop(self) -> None:
        self.model.stop_training = True

    @quiet_hook
    def on_train_begin(self, logs=None):
        self.monitor.begin_call()
        self.monitor.phase_begin("train")

    @quiet_hook
    def on_train_end(self, logs=None):
        self.monitor.end_call()

    @quiet_hook
    def on_epoch_begin(self, epoch, logs=None):
        # Both frameworks put fit()'s epochs= into the callbacks' params.
        self.monitor.epoch_begin(epoch, epochs=(getattr(self, "params", None) or {}).get("epochs"))
        if self._times_data_wait:
            self.monitor.wait_begin()

    @quiet_hook
    def on_train_batch_end(self, batch, logs=None):
        self._steps += 1
        if self._steps % self.every_n_steps == 0:
            self.monitor.step(self._steps)
        if self._times_data_wait:
            self.monitor.wait_begin()

    @quiet_hook
    def on_predict_begin(self, logs=None):
        self._phase_begin("predict")

    @quiet_hook
    def on_predict_end(self, logs=None):
        self._phase_end("predict")

    def _phase_begin(self, phase: str) -> None:
        if self.monitor.call == 0:  # not inside fit(): a call of its own
            self._own_call = phase
            self.monitor.begin_call()
        self.monitor.phase_begin(phase)

    def _phase_end(self, phase: str) -> None:
        self.monitor.phase_end(phase)
        if self._own_call == phase:
            self._own_call = None
            self.monitor.end_call()
