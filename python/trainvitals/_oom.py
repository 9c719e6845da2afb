"""What a training process does when trainvitals finds its memory at risk.

The sampler's analysis opens ``gpu-memory-leak``, ``host-memory-leak`` or
``oom-forecast`` and sends the risk back through the process's step slot
(docs/markers.md, "Memory risks"). The Monitor reads it in ``step()`` (and at
epoch boundaries) and hands it, as a dict, to the Responder its
``on_oom_risk=`` made:

- ``"warn"`` (default): one line on stderr per new risk;
- ``"checkpoint"``: saves a checkpoint (the framework callback's own way into
  the run directory, or the plain loop's ``checkpoint=`` function);
- ``"stop"``: ends the training gracefully (``Monitor.should_stop``, and the
  framework's own flag in a callback);
- a callable: receives the dict.

Checkpoint, stop and the callable act on an ``oom-forecast`` only: the memory
runs out before the planned run ends (or within the horizon). A leak alone,
which the run may well survive, is said in one line whatever the action.

The dict: ``kind`` (the finding's id), ``gpu`` (its index; None for host
memory), ``seconds_left``, ``epoch`` (the epoch the memory runs out in),
``planned_epochs`` (each None when not known), ``growth_bytes_per_second``
and ``message`` (one line in words).

With PyTorch (a plain loop or Lightning), a risk on a GPU (``gpu-memory-leak``,
or the ``oom-forecast`` it makes, which may come in the same moment) also leaves
``torch.cuda.memory_summary()`` in the run directory, once
(``torch_memory_summary.txt``), and with ``memory_snapshot=True`` the CUDA
allocator's history, recorded from the monitor's construction on
(``torch_memory_snapshot.pickle``, for https://pytorch.org/memory_viz).

An alert rule with ``stop = true`` sends ``alert-stop`` the same way
(docs/markers.md): whatever ``on_oom_risk`` says, the training stops gracefully,
as ``"stop"`` stops it, and one line says so.

Nothing here raises into the training: a failure is said once on stderr.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Optional

from . import _core
from ._run import say, say_once

ACTIONS = ("warn", "checkpoint", "stop")
ALERT_STOP = "alert-stop"  # the kind an alert rule with `stop = true` sends
RUN_DIR_ENV = _core.RUN_DIR_ENV
# Frameworks whose callback saves a checkpoint its own way.
_SAVES_ITSELF = ("keras", "lightning", "paddle")
_TORCH = ("torch", "lightning")
SUMMARY_FILE = "torch_memory_summary.txt"
SNAPSHOT_FILE = "torch_memory_snapshot.pickle"


def _config_error(message: str) -> Exception:
    return _core.ConfigError(f"trainvitals: {message}")


class Responder:
    """Acts on each new memory risk as ``on_oom_risk`` says; see the module's docstring.

    A framework callback sets ``save`` (run directory -> the path it saved to,
    None when it cannot save now) and ``stop`` (False when it cannot stop now);
    both run on the training thread, inside a hook of the framework, where it
    allows them."""

    def __init__(self, on_oom_risk, framework: str, checkpoint: Optional[Callable] = None,
                 memory_snapshot: bool = False) -> None:
        if not callable(on_oom_risk) and on_oom_risk not in ACTIONS:
            raise _config_error(f"on_oom_risk={on_oom_risk!r}: give \"warn\", \"checkpoint\", "
                                f"\"stop\" or a function that takes the forecast (a dict)")
        if checkpoint is not None and not callable(checkpoint):
            raise _config_error(f"checkpoint={checkpoint!r}: give the function that saves the "
                                f"model (called with no arguments)")
        if on_oom_risk == "checkpoint" and checkpoint is None and framework not in _SAVES_ITSELF:
            raise _config_error("on_oom_risk=\"checkpoint\" in a plain loop needs checkpoint=, "
                                "the function that saves the model")
        if not isinstance(memory_snapshot, bool):
            raise _config_error(f"memory_snapshot={memory_snapshot!r}: give True or False")
        if memory_snapshot and framework not in _TORCH:
            raise _config_error(f"memory_snapshot=True records PyTorch's CUDA allocator; "
                                f"this is {framework}")
        self.action = on_oom_risk
        self.framework = framework
        self.checkpoint = checkpoint
        self.save: Optional[Callable[[str], str]] = None
        self.stop: Optional[Callable[[], None]] = None
        # When the framework's stop takes effect: Paddle's fit stops after the epoch.
        self.stops_after = "step"
        self._alert_stopped = False
        self._evidence_written = False
        self._recording = memory_snapshot and _start_recording()

    def handle(self, risk: dict, monitor) -> None:
        """Acts on one new risk; never raises."""
        try:
            if risk.get("kind") == ALERT_STOP:
                self._stop_for_alert(monitor)
                return
            if risk.get("gpu") is not None:  # a GPU leak, or the forecast it makes
                self._write_evidence(monitor)
            line = f"{risk['kind']}: {risk['message']}"
            action = self.action
            if risk.get("kind") != "oom-forecast":
                say(line)  # a leak alone: the run may finish; only said
            elif callable(action):
                action(dict(risk))
            elif action == "warn":
                say(line)
            elif action == "stop":
                monitor.should_stop = True
                stopping = self.stop() if self.stop is not None else None
                say(line if stopping is False
                    else f"{line}; stopping the training (on_oom_risk=\"stop\")")
            elif self.checkpoint is not None:
                self.checkpoint()
                say(f"{line}; saved a checkpoint (on_oom_risk=\"checkpoint\")")
            else:
                where = self._save(monitor)
                say(f"{line}; saved a checkpoint to {where} (on_oom_risk=\"checkpoint\")"
                    if where else line)
        except Exception as e:  # never stop the training for us
            say_once("oom-risk", f"on_oom_risk={self._name()} failed: {type(e).__name__}: {e}")

    def _stop_for_alert(self, monitor) -> None:
        """An alert asks the training to stop: stops it the framework's way, once."""
        if self._alert_stopped:
            return
        self._alert_stopped = True
        monitor.should_stop = True
        stopping = self.stop() if self.stop is not None else None
        if stopping is False:
            say(f"an alert asks the training to stop; {self.framework} cannot stop here, "
                f"it goes on")
        else:
            say(f"an alert asks the training to stop; it stops after this {self.stops_after}")

    def _name(self) -> str:
        return getattr(self.action, "__name__", "a function") if callable(self.action) \
            else repr(self.action)

    def _save(self, monitor) -> Optional[str]:
        """The framework's own save into the run directory; the path, or None
        when the framework could not save now (it said why)."""
        run_dir = run_directory(monitor)
        if self.save is None or not run_dir:
            raise RuntimeError("no run directory to save the checkpoint in")
        return self.save(run_dir)

    def _write_evidence(self, monitor) -> None:
        """torch.cuda.memory_summary() (and the snapshot when recorded), once."""
        if self._evidence_written or self.framework not in _TORCH:
            return
        self._evidence_written = True
        torch = sys.modules.get("torch")
        run_dir = run_directory(monitor)
        if torch is None or not run_dir or not torch.cuda.is_available():
            return
        rank = getattr(monitor, "_rank", -1)
        suffix = f".rank{rank}" if rank > 0 else ""
        try:
            summary = os.path.join(run_dir, SUMMARY_FILE.replace(".txt", f"{suffix}.txt"))
            with open(summary, "w") as f:
                f.write(torch.cuda.memory_summary())
            if self._recording:
                torch.cuda.memory._dump_snapshot(
                    os.path.join(run_dir, SNAPSHOT_FILE.replace(".pickle", f"{suffix}.pickle")))
        except Exception as e:
            say_once("oom-evidence", f"no memory summary written: {type(e).__name__}: {e}")


def run_directory(monitor) -> Optional[str]:
    """The run directory of the run this process reports to, when known."""
    return getattr(monitor, "run_dir", None) or os.environ.get(RUN_DIR_ENV) or None


def _start_recording() -> bool:
    """Starts the CUDA allocator's history (memory_snapshot=True); False without CUDA."""
    try:
        import torch
        if not torch.cuda.is_available():
            say_once("snapshot", "memory_snapshot=True: no CUDA here, nothing recorded")
            return False
        torch.cuda.memory._record_memory_history()
        return True
    except Exception as e:
        say_once("snapshot", f"memory_snapshot=True: not recording: {type(e).__name__}: {e}")
        return False
