"""trainvitals: what a training run costs and what holds it back.

One line in a training script adds steps, epochs, phases and the framework
allocator's own figures to what trainvitals records:

    with trainvitals.monitor() as m:
        for step, batch in enumerate(loader):
            ...
            m.step(step)

Under ``trainvitals run`` (TRAINVITALS_SOCKET is set) markers go to that
supervisor, whose one sampler serves the whole process tree. Alone, the monitor
starts the C++ sampler on its own thread in this process and writes a run
directory. Nothing here raises into the training loop: a failure is said once on
stderr and the monitor goes quiet.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import sys
from typing import Callable, Dict, List, Optional

from . import _core

__version__ = _core.__version__
__all__ = ["Monitor", "monitor", "__version__"]

SOCKET_ENV = _core.SOCKET_ENV

# Reads the framework allocator's figures: a list of dicts with "device" and the
# byte counts markers carry (docs/markers.md). An empty list: no GPU, stop asking.
AllocatorReader = Callable[[], List[Dict[str, float]]]


def _say(message: str) -> None:
    try:
        sys.stderr.write(f"trainvitals: {message}\n")
    except Exception:  # stderr closed: nothing left to tell
        pass


def _tell(socket_path: str, rank: int, **marker) -> None:
    """Under `trainvitals run`: asks the supervisor to write its TensorBoard
    scalars into this log_dir too (marker tensorboard_log_dir, docs/markers.md)."""
    import socket, time
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.connect(socket_path)
        s.send(json.dumps({"v": 1, "type": "tensorboard_log_dir", "pid": os.getpid(), "rank": rank,
                           "slot": -1, "t": time.time(), **marker}).encode())


def _option_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


class Monitor:
    """Markers for one training process; see the module's docstring.

    ``rank``: this process's rank; by default RANK (torchrun, Lightning), else
    PADDLE_TRAINER_ID, from the environment, else none (-1).

    ``options`` are the CLI's monitor options by their config-file keys
    (``interval=2``, ``out="runs/a"``, ``tensorboard="logs"``...); they apply
    only when the monitor runs alone, not under ``trainvitals run``.
    """

    def __init__(self, framework: str = "python", rank: Optional[int] = None,
                 allocator: Optional[AllocatorReader] = None, **options):
        self.framework = framework
        self._rank = -1 if rank is None else int(rank)
        self._allocator = allocator
        self._options = {k: _option_text(v) for k, v in options.items() if v is not None}
        self._client = None
        self._session = None
        self._epoch = None
        self._phases: List[str] = []
        self.summary: Optional[dict] = None
        self.run_dir: Optional[str] = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> "Monitor":
        if self._client is not None:
            return self
        try:
            socket = os.environ.get(SOCKET_ENV, "")
            if not socket:
                self._session = _core.Session(self._options)
                socket = self._session.start()
                self.run_dir = self._session.run_dir
                # A training that dies of an exception never reaches close():
                # its summary is still written when the interpreter exits.
                atexit.register(self._close_at_exit)
                # Processes started from here on (DataLoader workers, DDP ranks)
                # report to this monitor instead of starting their own.
                if socket:
                    os.environ[SOCKET_ENV] = socket
            if socket:
                client = _core.Client(socket, self._rank, self.framework)
                if client.ok:
                    self._client = client
                else:
                    _say(f"markers off: {client.error}")
                if self._session is None and "tensorboard" in self._options:
                    _tell(socket, self._rank, log_dir=os.path.abspath(self._options["tensorboard"]))
        except _core.ConfigError:
            raise  # a usage mistake: say it before training starts
        except Exception as e:  # never stop the training for us
            self._quiet(e)
        return self

    def close(self) -> Optional[dict]:
        """Ends open phases, disconnects and, when alone, writes the summary."""
        return self._close(None)

    def _close_at_exit(self) -> None:
        # The interpreter sets sys.last_value (3.12: last_exc) for the uncaught
        # exception it is exiting with before atexit functions run.
        self._close(getattr(sys, "last_exc", None) or getattr(sys, "last_value", None))

    def _close(self, exception: Optional[BaseException]) -> Optional[dict]:
        try:
            for phase in list(reversed(self._phases)):
                self.phase_end(phase)
            if self._client is not None:
                if exception is None:
                    self._client.close()
                else:  # the summary says what the run died of (docs/markers.md, bye)
                    lines = str(exception).splitlines()
                    self._client.close(type(exception).__name__, lines[0] if lines else "")
                self._client = None
            if self._session is not None:
                atexit.unregister(self._close_at_exit)
                session, self._session = self._session, None
                os.environ.pop(SOCKET_ENV, None)
                self.summary = json.loads(session.finish())
        except Exception as e:
            self._quiet(e)
        return self.summary

    def __enter__(self) -> "Monitor":
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        self._close(exc)

    @property
    def active(self) -> bool:
        return self._client is not None

    # -- the hot path ----------------------------------------------------
    def step(self, step: Optional[int] = None) -> None:
        """Counts one training step (``step``: its number, when known)."""
        client = self._client
        if client is not None and client.step(-1 if step is None else int(step)) and self._allocator:
            self._send_allocator()

    # -- rare events -----------------------------------------------------
    def epoch_begin(self, epoch: int) -> None:
        self._epoch = int(epoch)
        self._call("epoch_begin", int(epoch))

    def epoch_end(self, epoch: Optional[int] = None, logs: Optional[dict] = None) -> None:
        if logs:
            self.scalars(**logs)
        self._call("epoch_end", self._epoch if epoch is None else int(epoch))

    def phase_begin(self, phase: str) -> None:
        self._phases.append(phase)
        self._call("phase_begin", phase)

    def phase_end(self, phase: str) -> None:
        if phase in self._phases:
            del self._phases[len(self._phases) - 1 - self._phases[::-1].index(phase)]
        self._call("phase_end", phase)

    @contextlib.contextmanager
    def epoch(self, epoch: int):
        """Marks an epoch; one that an exception cuts stays open, so the run
        records it as not complete."""
        self.epoch_begin(epoch)
        yield self
        self.epoch_end(epoch)

    @contextlib.contextmanager
    def phase(self, phase: str):
        self.phase_begin(phase)
        try:
            yield self
        finally:
            self.phase_end(phase)

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
            self._call("scalars", numbers)

    # -- internals -------------------------------------------------------
    def _call(self, method: str, *args) -> None:
        client = self._client
        if client is None:
            return
        try:
            getattr(client, method)(*args)
        except Exception as e:
            self._quiet(e)

    def _send_allocator(self) -> None:
        try:
            devices = self._allocator()
            if devices:
                self._client.allocator(devices)
            else:
                self._allocator = None  # no GPU: the figures are simply absent
        except Exception as e:
            self._allocator = None
            _say(f"allocator figures off: {type(e).__name__}: {e}")

    def _quiet(self, error: Exception) -> None:
        _say(f"markers off for this run: {type(error).__name__}: {error}")
        self._client = None


def monitor(**options) -> Monitor:
    """A Monitor for a plain training loop; use it as a context manager."""
    return Monitor(**options)
