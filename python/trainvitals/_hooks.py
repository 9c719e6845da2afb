"""What the framework callbacks share: quiet hooks and log values as numbers."""

from __future__ import annotations

import functools
import math
from typing import Dict, Iterable, Optional

from . import _core, _say


def quiet_hook(method):
    """Runs a callback hook; a failure is said once and the callback goes quiet.

    A ConfigError (a bad option) still raises: it is the user's mistake and comes
    before the training starts.
    """

    @functools.wraps(method)
    def hook(self, *args, **kwargs):
        if getattr(self, "_tv_broken", False):
            return None
        try:
            return method(self, *args, **kwargs)
        except _core.ConfigError:
            raise
        except Exception as e:  # never stop the training for us
            self._tv_broken = True
            _say(f"{type(self).__name__} off for this run: {type(e).__name__}: {e}")
            try:
                self.monitor.close()
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


class FitHooks:
    """The hooks Keras and Paddle callbacks share (same names, same arguments):
    train begin/end, epochs, train batches, predict. Each callback adds its
    epoch end and evaluation hooks. evaluate() and predict() outside fit() are
    runs of their own. Put it before the framework's Callback base."""

    def _tv_init(self, monitor, every_n_steps: int = 1) -> None:
        self.monitor = monitor
        self.summary = None
        self.every_n_steps = max(1, int(every_n_steps))
        self._steps = 0
        self._own_phase = None
        self._tv_broken = False

    @quiet_hook
    def on_train_begin(self, logs=None):
        self.monitor.start()
        self.monitor.phase_begin("train")

    @quiet_hook
    def on_train_end(self, logs=None):
        self.monitor.phase_end("train")
        self.summary = self.monitor.close()

    @quiet_hook
    def on_epoch_begin(self, epoch, logs=None):
        self.monitor.epoch_begin(epoch)

    @quiet_hook
    def on_train_batch_end(self, batch, logs=None):
        self._steps += 1
        if self._steps % self.every_n_steps == 0:
            self.monitor.step(self._steps)

    @quiet_hook
    def on_predict_begin(self, logs=None):
        self._phase_begin("predict")

    @quiet_hook
    def on_predict_end(self, logs=None):
        self._phase_end("predict")

    def _phase_begin(self, phase: str) -> None:
        if not self.monitor.active:
            self._own_phase = phase
            self.monitor.start()
        self.monitor.phase_begin(phase)

    def _phase_end(self, phase: str) -> None:
        self.monitor.phase_end(phase)
        if self._own_phase == phase:
            self._own_phase = None
            self.summary = self.monitor.close()
