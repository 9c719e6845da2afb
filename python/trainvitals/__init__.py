"""trainvitals: what a training run costs and what holds it back.

One line in a training script adds steps, epochs, phases and the framework
allocator's own figures to what trainvitals records:

    with trainvitals.monitor() as m:
        for epoch in range(epochs):
            m.epoch(epoch)
            for step, batch in enumerate(m.data(loader)):  # m.data(): times the wait for data
                ...
                m.step(step)

The framework callbacks load on first use: ``trainvitals.keras``,
``trainvitals.lightning``, ``trainvitals.paddle``, ``trainvitals.torch``
(``import trainvitals`` alone imports no framework).

A script is one run, as under ``trainvitals run``: the first marker of any
monitor or callback starts it, and it ends when the interpreter exits (or at an
explicit ``close()``), over every fit/evaluate/predict/test call. Under
``trainvitals run`` (TRAINVITALS_SOCKET is set) markers go to that supervisor,
whose one sampler serves the whole process tree. Alone, the C++ sampler runs on
its own thread in this process and writes one run directory. Nothing here
raises into the training loop: a failure is said once on stderr and the
monitor goes quiet.
"""

from __future__ import annotations

import importlib
import math
import os
import re
import warnings
from typing import Callable, Dict, List, Optional

from . import _core, _oom, _profile, _run
from ._run import SOCKET_ENV, say as _say

__version__ = _core.__version__
__all__ = ["Monitor", "UsageWarning", "monitor", "__version__"]

# Loaded on first attribute use, so that `import trainvitals` imports no framework.
_SUBMODULES = ("keras", "lightning", "paddle", "torch")

# Reads the framework allocator's figures: a list of dicts with "device" (the
# framework's device number), "uuid" when known, and the byte counts markers
# carry (docs/markers.md). An empty list: no GPU, stop asking.
AllocatorReader = Callable[[], List[Dict[str, object]]]

_PHASE_NAME = re.compile(r"[A-Za-z0-9_./-]{1,64}\Z")
_EPOCH_MAX = 2**62
_PLANNED_MAX = 2**53  # what an epoch_begin's "epochs" may say (docs/markers.md)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))


class UsageWarning(UserWarning):
    """A monitor was used in a way that records nothing, or not what was meant."""


_warned = set()


def _misuse(key: str, message: str) -> None:
    """Warns once per kind of misuse in this process; never raises."""
    if key in _warned:
        return
    _warned.add(key)
    try:
        warnings.warn(f"trainvitals: {message}", UsageWarning, stacklevel=4)
    except Exception:  # warnings turned into errors: still never raise into the training
        _say(message)


def _option_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _whole(value) -> Optional[int]:
    """A whole number >= 0 from an int-like value (numpy and tensor scalars too), else None."""
    if isinstance(value, (bool, str, bytes)):
        return None
    try:
        number = int(value)
        if number != value:  # 2.5, not 2
            return None
    except Exception:  # None, NaN, objects that are no number
        return None
    return number if 0 <= number < _EPOCH_MAX else None


def _planned(value) -> Optional[int]:
    """A planned number of epochs (>= 1) from a framework's value; None when not one
    (Lightning's -1 and None: no limit)."""
    number = _whole(value)
    return number if number is not None and number >= 1 else None


def _check_options(options: Dict[str, str]) -> None:
    """Raises ConfigError for a bad option or an ``out=`` an earlier process filled."""
    _core.check_options(options)
    out = options.get("out")
    if not out:
        return
    run = _run.existing()
    if run is not None:
        if run.alone and os.path.realpath(run.run_dir or "") != os.path.realpath(out):
            _run.say_once("out", f"this process already records into {run.run_dir}; "
                                 f"out={out} is not used")
        return  # the same run, or markers for a supervisor
    if os.environ.get(SOCKET_ENV):
        return  # under `trainvitals run`: its --out decides
    if os.path.exists(os.path.join(out, "samples.jsonl")):
        raise _core.ConfigError(
            f"trainvitals: out={out} already holds the run of an earlier process "
            f"(samples.jsonl): choose another directory or remove that one")


def _no_wait() -> None:
    pass


_NO_WAIT = (_no_wait, _no_wait)  # wait_begin, wait_end without a client


def _failed(exc_type, exc) -> bool:
    """Whether an exception leaving a `with` block cuts the epoch it had open:
    any but ``sys.exit()`` / ``sys.exit(0)``, which end the script normally."""
    if exc_type is None:
        return False
    if issubclass(exc_type, SystemExit):
        return getattr(exc, "code", None) not in (None, 0)
    return True


class _Span:
    """An epoch or phase that Monitor.epoch()/phase() began at the call.

    As a context manager it ends at the end of the block; otherwise an epoch
    lasts until the next epoch, close() or the script's end, and a phase until
    the next phase begun by a plain call or the end of the epoch it began in.
    """

    __slots__ = ("monitor", "kind", "name", "recorded", "held", "ended", "epoch")

    def __init__(self, monitor: "Monitor", kind: str, name, recorded=None, held=False,
                 epoch: Optional["_Span"] = None):
        self.monitor = monitor
        self.kind = kind  # "epoch", "phase", or "void" (a misuse: records nothing)
        self.name = name  # the epoch number as given, or the phase's name
        self.recorded = recorded  # the epoch number as recorded
        self.held = held  # inside a `with` block, or begun by epoch_begin/phase_begin
        self.ended = False
        self.epoch = epoch  # a phase's: the epoch open when it began (None: outside any)

    def __enter__(self) -> "Monitor":
        self.monitor._enter(self)
        return self.monitor

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.monitor._exit(self, _failed(exc_type, exc))
        return False

    def __repr__(self) -> str:
        return f"{self.kind}({self.name!r})"


class Monitor:
    """Markers for one training process; see the module's docstring.

    ``rank``: this process's rank; by default RANK (torchrun, Lightning), else
    PADDLE_TRAINER_ID, from the environment, else none (-1).

    ``total_epochs``: how many epochs the loop plans (the callbacks take it
    from the framework), so the OOM forecast can say whether the run will
    finish. ``on_oom_risk``: what to do when trainvitals finds the memory at
    risk (a leak, or an OOM forecast inside the run): ``"warn"`` (default, one
    line), ``"checkpoint"`` (calls ``checkpoint=``, a function of no
    arguments; the callbacks save the model into the run directory),
    ``"stop"`` (``should_stop`` becomes True; the callbacks stop the
    framework), or a function that receives the forecast as a dict.
    ``memory_snapshot=True`` (PyTorch) records the CUDA allocator's history
    for the evidence a GPU leak leaves in the run directory. A bad value
    raises ConfigError here. When an alert rule with ``stop = true`` fires
    (``trainvitals run --alerts``), ``should_stop`` becomes True whatever
    ``on_oom_risk`` says (the callbacks stop the framework), with one line on
    stderr: a plain loop checks it after each step.

    ``options`` are the CLI's monitor options by their config-file keys
    (``interval=2``, ``out="runs/a"``, ``tensorboard="logs"``...); they apply
    only when this process runs alone, not under ``trainvitals run``, and come
    from the monitor that starts the process's run. A bad option, or an
    ``out=`` that an earlier process filled, raises ConfigError here, before
    any training.
    """

    def __init__(self, framework: str = "python", rank: Optional[int] = None,
                 allocator: Optional[AllocatorReader] = None,
                 total_epochs: Optional[int] = None, on_oom_risk="warn",
                 checkpoint: Optional[Callable[[], object]] = None,
                 memory_snapshot: bool = False, **options):
        self.framework = framework
        self._rank = -1 if rank is None else int(rank)
        self._allocator = allocator
        self._options = {k: _option_text(v) for k, v in options.items() if v is not None}
        _check_options(self._options)
        self.total_epochs = _planned(total_epochs)
        if total_epochs is not None and self.total_epochs is None:
            raise _core.ConfigError(f"trainvitals: total_epochs={total_epochs!r}: give a whole "
                                    f"number >= 1")
        self._oom = _oom.Responder(on_oom_risk, framework, checkpoint, memory_snapshot)
        # Set by on_oom_risk="stop" when the memory is at risk, and by an alert
        # rule with `stop = true`: a plain loop checks it.
        self.should_stop = False
        self._state = "new"  # "new" -> "on" (started) -> "off" (quiet after a failure)
        self._run: Optional[_run.ProcessRun] = None
        self._set_client(None)
        self._call = 0  # the framework call this monitor's epochs belong to; 0: none yet
        self._offset = 0  # added to this call's epoch numbers so the record never repeats one
        self._first_epoch = None  # (call, the framework's number of its first epoch)
        self._epoch: Optional[_Span] = None
        self._phases: List[_Span] = []  # open phases, innermost last

    # -- lifecycle -------------------------------------------------------
    def start(self) -> "Monitor":
        """Joins (or starts) this process's run; the first marker does it anyway."""
        if self._state == "new" or (self._run is not None and self._run.state == "closed"):
            self._state = "on"
            self._run = _run.current()
            self._run.join(self)
            self._set_client(self._run.connect(self._options, self._rank, self.framework))
        return self

    def close(self) -> Optional[dict]:
        """Ends what is open and the process's run: alone, writes and prints its summary."""
        try:
            self.end_call()
            if self._run is not None:
                self._run.close()
        except Exception as e:
            self._quiet(e)
        self._set_client(None)
        self._state = "new"
        return self.summary

    def __enter__(self) -> "Monitor":
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        # The run goes on until the interpreter exits or close(): one script, one
        # run. An exception (not sys.exit(0)) leaves the open epoch open:
        # recorded as not complete.
        self.end_call(cut=_failed(exc_type, exc))

    @property
    def active(self) -> bool:
        return self._client is not None

    @property
    def call(self) -> int:
        """The number of the framework call now open in this process (1, 2, ...); 0: none."""
        return self._call

    @property
    def summary(self) -> Optional[dict]:
        """The run's summary once it ended (alone); None before, or under `trainvitals run`."""
        return self._run.summary if self._run is not None else None

    @property
    def run_dir(self) -> Optional[str]:
        """The run directory this process writes (alone); None under `trainvitals run`."""
        return self._run.run_dir if self._run is not None else None

    # -- the hot path ----------------------------------------------------
    def step(self, step: Optional[int] = None) -> None:
        """Counts one training step (``step``: its number, when known)."""
        client = self._client
        if client is None:
            if self._state != "new":
                return
            client = self.start()._client
            if client is None:
                return
        try:
            flags = client.step(-1 if step is None else int(step))
        except Exception:  # not a whole number, or too large for the slot
            flags = self._odd_step(step)
        if flags:
            self._step_flags(flags)

    def _set_client(self, client) -> None:
        self._client = client
        # The client's wait calls as plain builtins, which the instance's
        # wait_begin/wait_end shadow the methods below with: on the per-step
        # path of the hooks a call is then one C call, no Python frame.
        self._wait_calls = _NO_WAIT
        if client is not None:
            try:
                self._wait_calls = _core.wait_calls(client)
            except Exception as e:
                _run.say_once("wait", f"data wait not timed: {type(e).__name__}: {e}")
        self.wait_begin, self.wait_end = self._wait_calls

    # -- data wait -------------------------------------------------------
    def data(self, iterable):
        """Iterates over ``iterable`` (a DataLoader, any iterable), timing each
        ``next()`` as this process's wait for its next batch:
        ``for batch in m.data(loader):``. ``iter(iterable)`` counts too (a
        DataLoader starts its workers there). Items, exceptions and the end
        pass through unchanged; when the monitor is off it is ``iter(iterable)``."""
        client = self._client
        if client is None and self._state == "new":
            client = self.start()._client
        if client is None:
            return iter(iterable)
        self._wait_calls[0]()
        try:
            iterator = iter(iterable)
        except BaseException:  # the script's own error, as a plain loop would raise it
            self._wait_calls[1]()
            raise
        try:
            return _core.data_iterator(client, iterator, True)
        except Exception as e:
            self._wait_calls[1]()
            self._quiet(e)
            return iterator

    def wait_begin(self) -> None:
        """This process begins waiting for its next batch (a memory store, no syscall).
        (Each monitor replaces this method with its client's C function.)"""
        self._wait_calls[0]()

    def wait_end(self) -> None:
        """The batch came: the time since wait_begin() counts as data wait.
        (Each monitor replaces this method with its client's C function.)"""
        self._wait_calls[1]()

    # -- calls, epochs and phases ----------------------------------------
    def begin_call(self) -> None:
        """A framework call (fit, evaluate, predict, test, validate) begins: what the
        previous one left open ends, and its epochs continue the record."""
        self.end_call()
        self.start()
        self._call = self._run.begin_call()
        self._offset = 0

    def end_call(self, cut: bool = False) -> None:
        """Ends the phases and the epoch this monitor has open; ``cut`` (an
        exception ends the call) leaves the epoch open, so the run records it as
        not complete. The run's end (close(), the interpreter's exit) calls it."""
        try:
            if self._phases:
                self._end_phase(self._phases[0])
            if self._epoch is not None:
                self._end_epoch(self._epoch, cut)
        except Exception as e:
            self._quiet(e)
        self._call = 0

    def epoch(self, epoch: int) -> _Span:
        """Begins epoch ``epoch`` now, ending the previous one and the phases begun
        by plain calls inside it. It lasts until the next epoch, close() or the
        script's end (an uncaught exception leaves it open: not complete);
        ``with m.epoch(e):`` ends it with the block (an exception other than
        ``sys.exit(0)`` leaves it open)."""
        return self._begin_epoch(epoch, held=False)

    def epoch_begin(self, epoch: int, epochs: Optional[int] = None) -> None:
        """Begins epoch ``epoch``; ``epochs``: how many the framework call plans
        (counted as the framework numbers its epochs), else ``total_epochs``."""
        self._begin_epoch(epoch, held=True, planned=epochs)

    def epoch_end(self, epoch: Optional[int] = None, logs: Optional[dict] = None) -> None:
        if logs:
            self.scalars(**logs)
        if self._epoch is None:
            _misuse("epoch_end", f"epoch_end({epoch!r}) with no epoch open: nothing recorded")
            return
        self._end_epoch(self._epoch)

    def phase(self, phase: str) -> _Span:
        """Begins phase ``phase`` ("train", "eval", "test", "predict"...) now. A phase
        begun by a plain call lasts until the next one begins, or until the epoch
        open at the call ends; ``with m.phase(p):`` ends it with the block, and
        phases begun inside it nest."""
        return self._begin_phase(phase, held=False)

    def phase_begin(self, phase: str) -> None:
        self._begin_phase(phase, held=True)

    def phase_end(self, phase: str) -> None:
        for span in reversed(self._phases):
            if span.name == phase:
                self._end_phase(span)
                return
        _misuse("phase_end", f"phase_end({phase!r}) with no such phase open: nothing recorded")

    def scalars(self, **values) -> None:
        """User scalars such as the loss; values that are not plain numbers are skipped."""
        numbers = []
        for name, value in values.items():
            try:
                v = float(value)
            except (TypeError, ValueError):
                continue
            if math.isfinite(v):
                numbers.append((str(name), v))
        if numbers:
            self._send("scalars", numbers)

    # -- internals -------------------------------------------------------
    def _begin_epoch(self, epoch, held: bool, planned=None) -> _Span:
        number = _whole(epoch)
        if number is None:
            _misuse("epoch", f"epoch({epoch!r}): an epoch is a whole number >= 0; not recorded")
            return _Span(self, "void", epoch)
        if self._epoch is not None:
            self._end_epoch(self._epoch)  # a new epoch ends the previous one
        run = self.start()._run
        if self._call == 0:
            self._call = run.begin_call()  # a plain loop: the monitor's use is the call
        recorded = number + self._offset
        if recorded < run.next_epoch:  # a second fit counting from 0 again: continue instead
            self._offset = run.next_epoch - number
            recorded = run.next_epoch
        run.next_epoch = recorded + 1
        span = self._epoch = _Span(self, "epoch", number, recorded, held)
        # The framework's bound (Keras epochs=, Lightning max_epochs) counts
        # from its epoch 0: the call plans its epochs from its first one
        # (fit(epochs=50, initial_epoch=10) plans 40). A loop's total_epochs
        # is a count, however the loop numbers its epochs.
        if self._first_epoch is None or self._first_epoch[0] != self._call:
            self._first_epoch = (self._call, number)
        bound = _planned(planned)
        planned = bound - self._first_epoch[1] if bound else (self.total_epochs or 0)
        self._send("epoch_begin", recorded, self._call,
                   planned if 0 < planned <= _PLANNED_MAX else 0)
        self._check_risk()
        return span

    def _end_epoch(self, span: _Span, cut: bool = False) -> None:
        """Ends epoch `span` and the phases begun by plain calls inside it; ``cut``
        leaves the epoch itself open, so the run records it as not complete."""
        for phase in self._phases:
            if phase.epoch is span and not phase.held:
                self._end_phase(phase)  # and what was begun inside it
                break
        span.ended = True
        if self._epoch is span:
            self._epoch = None
        if not cut:
            self._send("epoch_end", span.recorded, begin=False)
            self._check_risk()

    def _begin_phase(self, phase, held: bool) -> _Span:
        if not isinstance(phase, str) or not _PHASE_NAME.match(phase):
            _misuse("phase", f"phase({phase!r}): a phase is a name of letters, digits and "
                             f"_-./ (at most 64); not recorded")
            return _Span(self, "void", phase)
        # A phase begun by a plain call lasts until the next one begins.
        while self._phases and not self._phases[-1].held:
            self._end_phase(self._phases[-1])
        span = _Span(self, "phase", phase, held=held, epoch=self._epoch)
        self._phases.append(span)
        self._send("phase_begin", phase)
        return span

    def _end_phase(self, span: _Span) -> None:
        """Ends `span` and the phases begun inside it, innermost first."""
        if span not in self._phases:
            return
        while self._phases:
            top = self._phases.pop()
            top.ended = True
            self._send("phase_end", top.name, begin=False)
            if top is span:
                return

    def _enter(self, span: _Span) -> None:
        if span.kind == "void":
            return
        if span.ended or span.held:
            _misuse("with", f"`with` on {span!r} that already ended or is already held: "
                            "it records nothing more")
            return
        span.held = True

    def _exit(self, span: _Span, failed: bool) -> None:
        try:
            if span.kind == "void":
                return
            if span.ended:
                _misuse("exit", f"{span!r} ended before its `with` block did "
                                "(a new epoch inside it?)")
                return
            if span.kind == "phase":
                self._end_phase(span)
            else:
                # An epoch an exception cuts stays open: the run records it as not complete.
                self._end_epoch(span, cut=failed)
        except Exception as e:
            self._quiet(e)

    def _send(self, method: str, *args, begin: bool = True) -> None:
        """Sends a rare marker; one that begins something starts the run on first use."""
        if begin and self._state == "new":
            self.start()
        elif self._run is not None and self._run.state == "closed":
            if not begin:
                return  # what the ended run had open ended with it
            self.start()
        client = self._client
        if client is None:
            return
        try:
            getattr(client, method)(*args)
        except Exception as e:
            self._quiet(e)

    def _odd_step(self, step) -> int:
        _misuse("step", f"step({step!r}): a step number is a whole number; counted without it")
        try:
            return self._client.step(-1)
        except Exception as e:
            self._quiet(e)
            return 0

    def _step_flags(self, flags: int) -> None:
        if flags & _core.STEP_ALLOCATOR_DUE and self._allocator:
            self._send_allocator()
        if flags & _core.STEP_RISK_CHANGED:
            self._take_risk()
        if flags & _core.STEP_REQUEST:
            run_dir = os.environ.get(_run.RUN_DIR_ENV) or (self._run and self._run.run_dir)
            _profile.profile_next_steps(self, self._client, run_dir)

    def _check_risk(self) -> None:
        """At a boundary: acts on a risk that came since the last step."""
        client = self._client
        try:
            if client is not None and client.risk_changed:
                self._take_risk()
        except Exception as e:
            self._quiet(e)

    def _take_risk(self) -> None:
        try:
            risk = self._client.risk()
        except Exception as e:
            self._quiet(e)
            return
        if risk is not None:
            self._oom.handle(risk, self)

    def _send_allocator(self) -> None:
        try:
            devices = self._allocator()
            if devices:
                self._client.allocator(devices)
            else:
                self._allocator = None  # no GPU: the figures are simply absent
        except Exception as e:
            self._allocator = None
            _run.say_once("allocator", f"allocator figures off: {type(e).__name__}: {e}")

    def _quiet(self, error: Exception) -> None:
        _run.say_once("quiet", f"markers off for this run: {type(error).__name__}: {error}")
        self._set_client(None)
        self._state = "off"


def monitor(**options) -> Monitor:
    """A Monitor for a plain training loop; see the module's docstring."""
    return Monitor(**options)
